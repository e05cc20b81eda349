"""The window's tabs in their order, and the preset a first launch opens: what the shell's parts share."""

PREVIEW_TAB, COMPILE_TAB, ARTIFACTS_TAB, RUN_TAB, SWEEPS_TAB, NUMERICS_TAB, STRUCTURE_TAB = range(7)
TAB_TITLES = ("&Preview", "&Compile", "&Artifacts", "&Run", "S&weeps", "&Numerics", "S&tructure")
DEFAULT_PRESET = "seed"
