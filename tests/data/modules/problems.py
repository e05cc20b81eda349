"""One small case per pre-flight problem the module kernel should catch or explain.

Each class (entry ``problems.py:<Name>``) is named for its problem and builds with no arguments
except ``TokenEmbedding``, whose factory arguments are annotated. What torch actually does with
each case, eager and under ``torch.jit.trace(..., strict=False)``, is recorded in README.md
next to this file. Only torch is imported; ``DynamicCache`` below is a stand-in for
``transformers.DynamicCache`` so the file needs no transformers.
"""

import torch
from torch import nn

# --- data-dependent output shapes ---------------------------------------------------------------


# Problem: data-dependent shape (torch.nonzero: the row count depends on the values).
class NonzeroModule(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nonzero(x)


# Problem: data-dependent shape (torch.masked_select: the length depends on the mask values).
class MaskedSelectModule(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.masked_select(x, x > 0)


# Problem: data-dependent shape (torch.unique: the length depends on the values).
class UniqueModule(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.unique(x)


# Problem: data-dependent shape (boolean-mask indexing, x[x > 0]).
class BoolIndexModule(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > 0]


# --- outputs that are not (only) tensors --------------------------------------------------------


# Problem: an output leaf is None.
class NoneOutput(nn.Module):
    def forward(self, x: torch.Tensor):
        return x * 2, None


# Problem: a non-tensor output (an int from x.shape; jit.trace makes it a 0-dim int64 tensor).
class NoTensorOutput(nn.Module):
    def forward(self, x: torch.Tensor):
        return x.shape[0]


# Problem: no tensor output, for real (a Python constant). Contrast with NoTensorOutput, whose
# x.shape[0] the tracer records as aten::size and returns as a 0-dim int64 tensor.
class IntConstantOutput(nn.Module):
    def forward(self, x: torch.Tensor):
        return 3


# Stand-in for transformers.DynamicCache: a non-tensor object among the outputs.
class DynamicCache:
    pass


# Problem: a dict output holding a non-tensor object (a KV cache, as HF decoders return it with
# use_cache=True).
class CacheOutput(nn.Module):
    def forward(self, x: torch.Tensor):
        return {"logits": x * 2, "past_key_values": DynamicCache()}


# Problem: complex-valued output (view_as_complex).
class ComplexOutput(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: [..., 2] float; the last dim becomes (real, imag).
        return torch.view_as_complex(x * 2)


# --- inputs whose values matter -----------------------------------------------------------------


# Problem: integer ids outside [0, vocab_size) crash nn.Embedding
# ("IndexError: index out of range in self"); the input spec's randint range must fit vocab_size.
class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int = 100, dim: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.embed(input_ids)


# --- inputs and outputs not connected to the graph ----------------------------------------------


# Problem: an input that the forward never uses (y).
class UnusedInput(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + 1


# Problem: an output that depends on no input (traced as a constant).
class ConstantOutput(nn.Module):
    def forward(self, x: torch.Tensor):
        return x + 1, torch.ones(3)


# --- control flow ---------------------------------------------------------------------------------


# Problem: Python control flow on a tensor value (TracerWarning "Converting a tensor to a Python
# boolean might cause the trace to be incorrect", pointing at the `if` line below).
class BranchOnValue(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x - 1


# --- forward signatures the wrapper cannot bind by name ---------------------------------------


# Problem: variadic positional inputs (*args): no input names to bind.
class StarArgs(nn.Module):
    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return sum(args)


# Problem: variadic keyword inputs (**kwargs): the names are open-ended.
class StarKwargs(nn.Module):
    def forward(self, x: torch.Tensor, **kwargs: torch.Tensor) -> torch.Tensor:
        out = x
        for value in kwargs.values():
            out = out + value
        return out


# Problem: a keyword-only input (mask): it must be passed by keyword, not position.
class KeywordOnly(nn.Module):
    def forward(self, x: torch.Tensor, *, mask: torch.Tensor) -> torch.Tensor:
        return x * mask


# Problem: a non-tensor argument (theta: float) that must be bound as a constant; passing a
# tensor there is wrong (it becomes a traced input instead of a constant).
class ThetaModule(nn.Module):
    def forward(self, x: torch.Tensor, theta: float) -> torch.Tensor:
        return torch.cos(x * theta)


# --- tensors made inside forward ---------------------------------------------------------------


# Case: a tensor created inside forward (torch.arange on the default, CPU, device); fine on CPU.
class CpuTensorInside(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[0])
        return x + positions.unsqueeze(-1).to(x.dtype)


# --- user code that fails ------------------------------------------------------------------------


# Problem: the forward itself raises (the error must be reported as coming from user code).
class RaisesInForward(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("boom from user code")
