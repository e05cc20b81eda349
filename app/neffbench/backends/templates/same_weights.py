#: ${weights_module}


# The digest of the module the job compiled; a build that makes another module makes another NEFF.
RECORDED_WEIGHTS = "${recorded}"


def same_weights(module) -> bool:
    """Whether this build made the module the job compiled; says so plainly when it did not."""
    difference = weights_difference(weights_digest(module), RECORDED_WEIGHTS)
    if not difference:
        return True
    print(f"reproduce.py: {difference}. The NEFF this script would make is not the job's: check the files "
          "and library versions the job lists (job.json, sources), or rerun with --anyway to build it all the "
          "same.", file=sys.stderr)
    return ANYWAY
