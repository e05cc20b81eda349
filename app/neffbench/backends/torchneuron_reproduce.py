"""``reproduce.py`` for a torchneuron job: the same wrapper, the same environment variables and the
``torch.compile(backend="neuron")`` call, standalone (torch and torch-neuronx 2.13.3+ only), filled into
``templates/torchneuron_reproduce.py``."""

from __future__ import annotations

from typing import Any

from neffbench.backends import torchneuron_options as tn
from neffbench.backends.compiler_command import LOGFILE_NAME
from neffbench.backends.reproduce_script import TEMPLATES, job_values
from neffbench.kernels.api import Built
from neffbench.kernels.script_template import fill


def _env_source(spec: Any) -> str:
    """The job's variables with OUT for the job directory (the log file's flag is added after the split)."""
    env = tn.isolation_env("OUT")
    lines = []
    for key, value in env.items():
        if value.startswith("OUT/"):
            lines.append(f"    {key!r}: str(OUT / {value[4:]!r}),")
        else:
            lines.append(f"    {key!r}: {value!r},")
    lines.append(
        f"    'NEURON_CC_FLAGS': ' '.join(CC_FLAGS + ['--logfile', str(OUT / 'compiler' / {LOGFILE_NAME!r})]),"
    )
    lines.append(f"    'NEURON_COMPILER_OPT_LEVEL': {tn.opt_level(spec)!r},")
    return "\n".join(lines)


def render(spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None = None) -> str:
    """The script's text for a single-bucket spec (``built``: what the job compiled)."""
    command = " ".join(tn.expected_command(spec, tn.Host("<instance>", "", None, ""), tn.cc_flags(spec)))
    return fill(
        TEMPLATES / "torchneuron_reproduce.py",
        **job_values(spec, job_id=job_id, built=built, weights=weights),
        command=command,
        cc_flags=tn.cc_flags(spec),
        lnc_env=tn.LNC_ENV,
        device_env=tn.DEVICE_ENV,
        device=tn.DEVICE,
        env_source=_env_source(spec),
        logfile=LOGFILE_NAME,
    )
