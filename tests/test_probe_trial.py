"""The probe's trial: the module made and called once on the example inputs, the step it failed in named."""

from __future__ import annotations

from pathlib import Path

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import to_dict
from neffbench.workers.probe import answer

MLP = Path(__file__).parent / "data" / "modules" / "mlp.py"


def _trial(inputs: dict[str, str], **kwargs) -> dict:
    spec = ModuleCompileSpec(module=ModuleSection(entry=f"{MLP}:make_mlp", kwargs=kwargs), inputs=inputs)
    return answer("trial", {"spec": to_dict(spec)})


def test_a_shape_the_forward_refuses_fails_in_the_forward_step():
    found = _trial({"x": "f32[2,16]"})
    assert not found["ok"] and found["step"] == "forward"
    assert "mat1 and mat2 shapes cannot be multiplied" in found["error"]


def test_a_constructor_that_raises_fails_before_any_call_and_a_fitting_one_passes():
    made = _trial({"x": "f32[2,16]"}, activation="swish")
    assert not made["ok"] and made["step"] == "" and "swish" in made["error"]
    assert _trial({"x": "f32[2,16]"}, hidden_size=16)["ok"]


def test_a_kernel_error_reaches_the_window_as_its_sentence_without_the_class_name(monkeypatch):
    from neffbench.kernels.api import KernelError
    from neffbench.workers import probe

    def refuses(_request):
        raise KernelError("the entry pkg.mod:Model does not resolve: no module named 'pkg'.")

    monkeypatch.setitem(probe.COMMANDS, "refuses", refuses)
    found = answer("refuses", {})
    assert found["error"] == "the entry pkg.mod:Model does not resolve: no module named 'pkg'."
    assert not found["ok"] and "KernelError" not in found["error"]
