"""The window's shell: main window, actions and menus, settings, status bar, launch."""
