"""Seeing the window from another machine: the display situation (local, forwarded X11, none), and
``neffbench remote``'s private display shown by a VNC server that listens on 127.0.0.1 only.

The pieces, each without Qt:

- :mod:`.display`: what kind of display this process has, what Qt needs on a forwarded one, and how to
  install what is missing;
- :mod:`.private`: the session's folder (0700), its VNC password and its X cookie (0600 files, never argv);
- :mod:`.sockets`: listening sockets read from ``/proc`` (the check that the VNC server is loopback only)
  and a free VNC port;
- :mod:`.servers`: starting Xvfb on a display it picks itself and x11vnc on a free port;
- :mod:`.supervisor`: the child that owns a session's processes and takes them with it when its lifeline
  (:mod:`neffbench.procs`) closes;
- :mod:`.session`: the parent's side, which ``neffbench remote`` drives.
"""
