"""NEFF files: read one without Neuron tools, index a workdir of them, and compare two."""

from neffbench.neff.diff import Difference, diff_neffs
from neffbench.neff.index import JOB_FILE, NeffCache, NeffFile, find_job, scan_neffs, walk
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
    "JOB_FILE",
    "Difference",
    "Limits",
    "MemberInfo",
    "NeffCache",
    "NeffError",
    "NeffFile",
    "NeffHeader",
    "NeffInfo",
    "TensorInfo",
    "diff_neffs",
    "find_job",
    "read_neff",
    "scan_neffs",
    "walk",
]
