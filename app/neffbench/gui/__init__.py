"""The workbench window: presents the core and wires it to widgets; holds no compile or parsing logic."""
