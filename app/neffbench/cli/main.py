"""The ``neffbench`` command: no arguments opens the workbench; subcommands do the same work from a shell."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Each module defines ``register(subparsers)``, which adds its subcommand(s) and sets ``func``
# (taking the parsed args, returning the exit code). Only the module of the command being run is
# imported, and modules import heavy libraries lazily, so a compile's parent process starts fast.
COMMANDS = {
    "compile": "neffbench.cli.compile_cmd",
    "check": "neffbench.cli.check_cmd",
    "preview": "neffbench.cli.preview_cmd",
    "inspect": "neffbench.cli.inspect_cmd",
    "list": "neffbench.cli.inspect_cmd",
    "diff": "neffbench.cli.inspect_cmd",
    "preset": "neffbench.cli.preset_cmd",
    "doctor": "neffbench.cli.doctor_cmd",
    "kernel": "neffbench.cli.kernel_cmd",
    "run": "neffbench.cli.run_cmd",
    "explain": "neffbench.cli.explain_cmd",
    "bundle": "neffbench.cli.bundle_cmd",
    "sweep": "neffbench.cli.sweep_cmd",
    "compare": "neffbench.cli.compare_cmd",
    "structure": "neffbench.cli.structure_cmd",
    "report": "neffbench.cli.report_cmd",
    "remote": "neffbench.cli.remote_cmd",
}


def _kernel_commands() -> dict[str, str]:
    """The subcommands kernels bring (``CliContribution.commands``: the module kernel's ``resolve``)."""
    from neffbench.kernels import registry

    return {name: module for kernel in registry.available() for name, module in kernel.cli.commands.items()}


def command_module(command: str) -> str | None:
    """The module that registers ``command``: the CLI's own, else a kernel's; None for no such command."""
    return COMMANDS.get(command) or _kernel_commands().get(command)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only with ``command``'s module when it is known."""
    parser = argparse.ArgumentParser(
        prog="neffbench",
        description="NEFF Workbench: compile PyTorch functions into AWS Neuron NEFF executables. "
        "Run without arguments to open the workbench window.",
    )
    from neffbench import __version__

    parser.add_argument("--version", action="version", version=f"neffbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    known = command_module(command) if command else None
    modules = [known] if known else list(dict.fromkeys([*COMMANDS.values(), *_kernel_commands().values()]))
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    if not args_list:
        return gui_main()
    command = args_list[0]
    # A command may start slow work before its arguments are even parsed (compile starts its worker).
    known = command_module(command)
    module = importlib.import_module(known) if known else None
    prestarted = module.prestart(args_list[1:]) if module is not None and hasattr(module, "prestart") else None
    try:
        parser = build_parser(command)
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        args.prestarted = prestarted
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `neffbench ... | head` closed the pipe: not an error worth a traceback.
        return 0
    finally:
        if prestarted is not None:
            prestarted.discard()  # a no-op once a job has taken it


def run() -> None:
    """The ``neffbench`` command: :func:`main`, then a command's process ends without the interpreter tearing its
    modules down (with torch loaded, a third of a CPU-second after the answer was given). The window's end is
    left to Qt and the interpreter, which save its settings."""
    code = main()
    if sys.argv[1:]:
        from neffbench.procs import exit_now

        exit_now(code, exit_functions=True)
    sys.exit(code)


def gui_main() -> int:
    from neffbench.toolchain.host import display

    # Without a display Qt aborts the process with a core dump; say what to do instead.
    if sys.platform.startswith("linux") and not display() and not os.environ.get("QT_QPA_PLATFORM"):
        print(
            "neffbench: no display to open the workbench window on (neither DISPLAY nor WAYLAND_DISPLAY "
            "is set).\n  To see the window from your laptop: `neffbench remote` (the window on a private "
            "display, shown by VNC through an SSH tunnel; it prints what to type), or `ssh -X` into this box, or a "
            "desktop session on it (NICE DCV); `neffbench doctor` says what this box has for each.\n"
            "  Without a window, `neffbench preview SPEC --out DIR` renders the preview plots to PNG and "
            "every other action is a `neffbench` command (see `neffbench --help`).",
            file=sys.stderr,
        )
        return 1
    from neffbench.remote.xcb import problem

    # Before Qt: a missing library of its xcb plugin ends QApplication in an abort with a core dump.
    if why := problem():
        print(f"neffbench: {why}", file=sys.stderr)
        return 1
    from neffbench.gui.shell.launch import launch

    return launch()


if __name__ == "__main__":  # pragma: no cover
    run()
