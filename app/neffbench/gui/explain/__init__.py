"""The explain view: what a compiler log says happened, and why."""
