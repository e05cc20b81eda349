"""The Compile tab: the compile's stages, its streaming log and the bucket loop the window drives."""
