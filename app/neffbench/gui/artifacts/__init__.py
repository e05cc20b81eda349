"""The Artifacts tab: every NEFF and job in the workdir, with what each takes, returns and was built from."""
