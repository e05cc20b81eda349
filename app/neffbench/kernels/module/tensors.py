"""Tensor specs for example inputs: parse, validate, format and build ``dtype[dims] init`` text."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from neffbench.kernels.api import ValueRange

if TYPE_CHECKING:  # torch stays out of the GUI process: it is imported inside build() only
    import torch

DTYPE_ALIASES: dict[str, str] = {
    "f32": "float32",
    "float32": "float32",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "f16": "float16",
    "float16": "float16",
    "f64": "float64",
    "float64": "float64",
    "i64": "int64",
    "int64": "int64",
    "i32": "int32",
    "int32": "int32",
    "i16": "int16",
    "int16": "int16",
    "i8": "int8",
    "int8": "int8",
    "u8": "uint8",
    "uint8": "uint8",
    "bool": "bool",
}
FLOAT_DTYPES = frozenset({"float32", "bfloat16", "float16", "float64"})
INT_DTYPES = frozenset({"int64", "int32", "int16", "int8", "uint8"})

# Inclusive value ranges; bool counts as the integers 0 and 1 so randint and full share one check.
_VALUE_RANGES = {
    "int64": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int8": (-128, 127),
    "uint8": (0, 255),
    "bool": (0, 1),
}
_FLOAT_LIMITS = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}
_INIT_FORMS = {
    "randn": "randn",
    "rand": "rand(lo, hi)",
    "randint": "randint(lo, hi)",
    "ones": "ones",
    "zeros": "zeros",
    "full": "full(v)",
    "arange": "arange",
    "file": 'file("x.npy")',
}
_FLOAT_KINDS = ("randn", "rand", "ones", "zeros", "full", "arange", "file")
_INTEGER_KINDS = ("randint", "ones", "zeros", "full", "arange", "file")  # int and bool dtypes
_ARG_HINTS = {
    **dict.fromkeys(("randn", "ones", "zeros", "arange"), "no arguments"),
    "rand": "two numbers",
    "randint": "two whole numbers",
    "full": "one number",
    "file": "a quoted path",
}

_SPEC_RE = re.compile(r"\s*([^\[\s]*)\s*\[([^\]]*)\]\s*(.*?)\s*", re.DOTALL)
_INIT_RE = re.compile(r"([A-Za-z_]\w*)\s*(?:\((.*)\))?", re.DOTALL)
_AXIS_RE = re.compile(r"\{\s*([A-Za-z_]\w*)\s*\}")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_QUOTED_RE = re.compile(r"\s*([\"'])(.+)\1\s*", re.DOTALL)


class TensorSpecError(ValueError):
    """A tensor spec that cannot be parsed, resolved or built; the message is one sentence."""


@dataclass(frozen=True)
class Init:
    kind: str
    args: tuple = ()


@dataclass(frozen=True)
class TensorSpec:
    dtype: str
    dims: tuple[int | str, ...]
    init: Init
    explicit_init: bool

    def axes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d for d in self.dims if isinstance(d, str)))

    def shape(self, bucket: Mapping[str, int]) -> tuple[int, ...]:
        sizes = []
        for dim in self.dims:
            if isinstance(dim, int):
                sizes.append(dim)
                continue
            if dim not in bucket:
                known = ", ".join(bucket) if bucket else "no axes"
                raise TensorSpecError(f"axis '{dim}' in \"{self.format()}\" is not in the bucket, which has {known}")
            size = bucket[dim]
            if isinstance(size, bool) or not hasattr(size, "__index__") or size < 1:  # numpy ints are fine
                raise TensorSpecError(
                    f"axis '{dim}' in \"{self.format()}\" has bucket size {size!r}; "
                    "expected a whole number of at least 1"
                )
            sizes.append(int(size))
        return tuple(sizes)

    def format(self) -> str:
        dims = ",".join(str(d) if isinstance(d, int) else "{" + d + "}" for d in self.dims)
        # A non-default init is written even when not explicit, so the text never loses information.
        if self.explicit_init or self.init != _default_init(self.dtype):
            return f"{self.dtype}[{dims}] {_format_init(self.init)}"
        return f"{self.dtype}[{dims}]"


def _default_init(dtype: str) -> Init:
    return Init("randn") if dtype in FLOAT_DTYPES else Init("ones") if dtype == "bool" else Init("zeros")


def parse(text: str) -> TensorSpec:
    quoted = text.strip()
    match = _SPEC_RE.fullmatch(text)
    if match is None:
        raise TensorSpecError(
            f'"{quoted}" is not a tensor spec; expected dtype[dims] init, such as "f32[2,{{seq}}] randn"'
        )
    dtype_text, dims_text, init_text = match.groups()
    if dtype_text not in DTYPE_ALIASES:
        raise TensorSpecError(
            f"unknown dtype '{dtype_text}' in \"{quoted}\"; expected one of " + ", ".join(DTYPE_ALIASES)
        )
    dtype = DTYPE_ALIASES[dtype_text]
    dims = () if not dims_text.strip() else tuple(_parse_dim(d.strip(), quoted) for d in dims_text.split(","))
    if not init_text:
        return TensorSpec(dtype, dims, _default_init(dtype), explicit_init=False)
    return TensorSpec(dtype, dims, _parse_init(init_text, dtype, quoted), explicit_init=True)


def _parse_dim(dim: str, quoted: str) -> int | str:
    axis = _AXIS_RE.fullmatch(dim)
    if axis:
        return axis.group(1)
    if dim.isdigit() and dim.isascii() and int(dim) >= 1:
        return int(dim)
    raise TensorSpecError(f"dim '{dim}' in \"{quoted}\" must be a whole number of at least 1 or {{axis}}")


def _parse_init(init_text: str, dtype: str, quoted: str) -> Init:
    match = _INIT_RE.fullmatch(init_text)
    if match is None or match.group(1) not in _INIT_FORMS:
        raise TensorSpecError(f"init '{init_text}' in \"{quoted}\" is not one of " + ", ".join(_INIT_FORMS.values()))
    kind, arg_text = match.groups()
    where = f"init '{init_text}' in \"{quoted}\""
    args = _parse_args(kind, arg_text)
    if args is None:
        raise TensorSpecError(f"{where} has malformed arguments; expected {_INIT_FORMS[kind]} with {_ARG_HINTS[kind]}")
    allowed = _FLOAT_KINDS if dtype in FLOAT_DTYPES else _INTEGER_KINDS
    if kind not in allowed:
        raise TensorSpecError(
            f"{where} does not fit {dtype}; expected one of " + ", ".join(_INIT_FORMS[k] for k in allowed)
        )
    if kind in ("rand", "randint") and not args[0] < args[1]:
        raise TensorSpecError(f"{where} needs lo less than hi")
    if dtype in FLOAT_DTYPES and kind in ("rand", "full"):
        # torch.full overflows to inf for some dtypes and raises for others; refuse it up front.
        limit = _FLOAT_LIMITS[dtype]
        if not all(-limit <= a <= limit for a in args):
            names = "lo and hi" if kind == "rand" else "v"
            raise TensorSpecError(f"{where} does not fit {dtype}; expected {names} from {-limit!r} to {limit!r}")
        return Init(kind, tuple(float(a) for a in args))
    if kind not in ("randint", "full"):
        return Init(kind, args)
    low, high = _VALUE_RANGES[dtype]
    if kind == "randint":
        high_limit = min(high + 1, 2**63 - 1)  # torch.randint cannot take 2**63 as its exclusive bound
        if not low <= args[0] < args[1] <= high_limit:
            raise TensorSpecError(f"{where} does not fit {dtype}; expected {low} <= lo < hi <= {high_limit}")
        return Init(kind, args)
    value = _whole(args[0])
    if value is None or not low <= value <= high:
        raise TensorSpecError(f"{where} does not fit {dtype}; expected a whole number v from {low} to {high}")
    return Init(kind, (value,))


def _parse_args(kind: str, arg_text: str | None) -> tuple | None:
    """The init's arguments as Python values, or None when they do not have the kind's form."""
    if kind in ("randn", "ones", "zeros", "arange"):
        return () if arg_text is None or not arg_text.strip() else None
    if arg_text is None:
        return None
    if kind == "file":
        path = _QUOTED_RE.fullmatch(arg_text)
        return (path.group(2),) if path else None
    parts = [p.strip() for p in arg_text.split(",")]
    if len(parts) != (1 if kind == "full" else 2) or not all(_NUMBER_RE.fullmatch(p) for p in parts):
        return None
    numbers = [int(p) if re.fullmatch(r"[+-]?\d+", p) else float(p) for p in parts]
    if any(isinstance(n, float) and not math.isfinite(n) for n in numbers):  # "1e999" reads as inf
        return None
    if kind == "randint":
        whole = [_whole(n) for n in numbers]
        return None if None in whole else tuple(whole)
    return tuple(numbers)


def _whole(number: int | float) -> int | None:
    if isinstance(number, int):
        return number
    return int(number) if number.is_integer() else None


def _format_number(number: int | float) -> str:
    # Integral floats print without ".0" because parse() turns them back into floats for float dtypes.
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e16:
        return str(int(number))
    return repr(number)


def _format_init(init: Init) -> str:
    if init.kind == "file":
        path = init.args[0]
        quote = "'" if '"' in path else '"'
        return f"file({quote}{path}{quote})"
    if not init.args:
        return init.kind
    return f"{init.kind}({', '.join(_format_number(a) for a in init.args)})"


def describe(name: str, spec: TensorSpec, bucket: Mapping[str, int]) -> str:
    dims = ",".join(str(size) for size in spec.shape(bucket))
    return f"{name}: {spec.dtype}[{dims}] {_format_init(spec.init)}"


def value_ranges(texts: Mapping[str, str], names: list[str], inputs: tuple[torch.Tensor, ...]) -> dict[str, ValueRange]:
    """The declared range of each integer input built from a tensor spec (``texts``: the spec's [inputs]); an
    input from the examples function declares none, so pre-flight reads its values."""
    out = {}
    for name, tensor in zip(names, inputs):
        found = _value_range(parse(texts[name]), tensor) if name in texts else None
        if found is not None:
            out[name] = found
    return out


def _value_range(spec: TensorSpec, tensor: torch.Tensor) -> ValueRange | None:
    """The whole numbers an integer input's init declares (any seed's draw, inclusive), with the init as written;
    a file declares what it holds. None for float and bool inputs, and for an empty one."""
    if spec.dtype not in INT_DTYPES or tensor.numel() == 0:
        return None
    kind, args = spec.init.kind, spec.init.args
    if kind == "randint":
        low, high = args[0], args[1] - 1
    elif kind == "full":
        low = high = args[0]
    elif kind in ("ones", "zeros"):
        low = high = int(kind == "ones")
    elif kind == "arange":
        low, high = 0, tensor.numel() - 1
    else:
        low, high = int(tensor.min()), int(tensor.max())
    return ValueRange(int(low), int(high), _format_init(spec.init))


def build(
    spec: TensorSpec,
    bucket: Mapping[str, int],
    generator: torch.Generator,
    base_dir: Path | None = None,
    start: int = 0,
) -> torch.Tensor:
    """The tensor; ``start``: where ``arange`` begins (a later call of a module with state goes on from the
    positions the calls before it took)."""
    import torch

    shape = spec.shape(bucket)
    dtype = getattr(torch, spec.dtype)
    kind, args = spec.init.kind, spec.init.args
    if kind == "randn":  # drawn in float32 then cast, so a seed gives the same values for every float dtype
        tensor = torch.randn(shape, generator=generator, dtype=torch.float32)
    elif kind == "rand":
        low, high = args
        unit = torch.rand(shape, generator=generator, dtype=torch.float32).double()
        tensor = low * (1 - unit) + high * unit  # never overflows, unlike low + unit * (high - low)
    elif kind == "randint":
        tensor = torch.randint(args[0], args[1], shape, generator=generator, dtype=torch.int64)
    elif kind == "ones":
        tensor = torch.ones(shape, dtype=dtype)
    elif kind == "zeros":
        tensor = torch.zeros(shape, dtype=dtype)
    elif kind == "full":
        tensor = torch.full(shape, args[0], dtype=dtype)
    elif kind == "arange":
        tensor = torch.arange(start, start + math.prod(shape)).reshape(shape)
    else:
        tensor = _load_file(spec, shape, base_dir)
    return tensor.to(dtype)


def _load_file(spec: TensorSpec, shape: tuple[int, ...], base_dir: Path | None) -> torch.Tensor:
    import numpy as np
    import torch

    path = Path(spec.init.args[0])
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    text = spec.format()
    if not path.is_file():
        raise TensorSpecError(f'file "{path}" for "{text}" does not exist')
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise TensorSpecError(f'file "{path}" for "{text}" is not a readable .npy array ({error})') from None
    if tuple(array.shape) != shape:
        raise TensorSpecError(f'file "{path}" for "{text}" has shape {tuple(array.shape)}; expected {shape}')
    # numpy has no bfloat16, so bfloat16 inputs are stored as float32 and rounded here.
    wanted = "float32" if spec.dtype == "bfloat16" else spec.dtype
    if array.dtype.name != wanted:
        note = " (numpy has no bfloat16)" if spec.dtype == "bfloat16" else ""
        raise TensorSpecError(f'file "{path}" for "{text}" holds {array.dtype.name}; expected {wanted}{note}')
    # from_numpy needs native byte order and a C-contiguous buffer (a saved array may have neither).
    return torch.from_numpy(array.astype(array.dtype.newbyteorder("="), order="C", copy=False))
