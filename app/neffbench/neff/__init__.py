"""NEFF files: read one without Neuron tools, index a workdir of them, and compare two."""

from neffbench.neff.diff import Difference, diff_neffs
from neffbench.neff.index import (
    JobRecord,
    JobRecordError,
    NeffCache,
    NeffRecord,
    find_job,
    read_job,
    scan_workdir,
)
from neffbench.neff.reader import (
    DEFAULT_LIMITS,
    HEADER_SIZE,
    Limits,
    MemberInfo,
    NeffError,
    NeffHeader,
    NeffInfo,
    TensorInfo,
    read_neff,
)

__all__ = [
    "DEFAULT_LIMITS",
    "HEADER_SIZE",
    "Difference",
    "JobRecord",
    "JobRecordError",
    "Limits",
    "MemberInfo",
    "NeffCache",
    "NeffError",
    "NeffHeader",
    "NeffInfo",
    "NeffRecord",
    "TensorInfo",
    "diff_neffs",
    "find_job",
    "read_job",
    "read_neff",
    "scan_workdir",
]
