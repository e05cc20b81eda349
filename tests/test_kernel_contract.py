"""What every registered kernel promises, built-in or plugin: one test per promise, parametrized over the registry.

A new kernel (a folder with an entry point, or a plugin package) is checked here without editing this
file: it loads clean against the declared hooks, its spec files round-trip, its presets load and
validate, its signature is what its build traces, its reproduction script rebuilds the job, and its
preview (if any) draws finite plots. Builds use the kernel's default spec, else its first preset; a
kernel with neither buildable (the module kernel needs the user's code) is checked by its own tests.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from neffbench.kernels import hook_checks, registry
from neffbench.spec import dumps_json, dumps_toml, errors, load, loads_json, loads_toml, spec_hash, validate
from tests.plugin_wheel import install

PLUGIN = "demo_scale"
NAMES = [*registry.names(), *([PLUGIN] if PLUGIN not in registry.names() else [])]


@pytest.fixture(scope="module", autouse=True)
def plugin_on_path(tmp_path_factory):
    """The demo plugin pip-installed and on this process's path, as it is for a user who installed it."""
    site = install(tmp_path_factory.mktemp("contract-plugin") / "site")
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
    registry._loaded.pop(PLUGIN, None)
    sys.modules.pop("neffbench_demo_kernel", None)


@pytest.fixture(params=NAMES)
def kernel(request):
    return registry.get(request.param)


def _buildable(kernel):
    """The kernel's default spec when it has no errors, else its first preset that has none; None: neither."""
    candidates = [kernel.default_spec()]
    if kernel.preset_dir is not None:
        candidates += [load(p) for p in sorted(Path(kernel.preset_dir).glob("*.toml"))]
    spec = next((s for s in candidates if not errors(s)), None)
    return None if spec is None else kernel.for_bucket(spec, kernel.buckets(spec)[0])


def _built_or_skip(kernel):
    spec = _buildable(kernel)
    if spec is None:
        pytest.skip(f"{kernel.name} has no spec that builds without the user's code")
    return spec, kernel.build(spec)


def test_the_kernel_loads_clean_against_the_declared_hooks(kernel):
    assert hook_checks.problems(kernel, kernel.name) == []
    assert kernel.title and kernel.summary
    assert registry.for_spec(kernel.default_spec()) is kernel


def test_listing_and_the_spec_side_import_no_torch(kernel):
    entry = registry.entries()[kernel.name]
    code = (
        f"import sys, pkgutil\nsys.path[:0] = {sys.path!r}\npkgutil.resolve_name({entry.value!r})\n"
        "from neffbench.kernels import registry\nregistry.names()\n"
        "assert 'torch' not in sys.modules, 'torch imported'\nassert 'PySide6' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_default_spec_round_trips_and_its_hash_ignores_the_seed(kernel):
    spec = kernel.default_spec()
    assert loads_toml(dumps_toml(spec, mark_ignored=False)) == spec
    assert loads_json(dumps_json(spec)) == spec
    assert spec_hash(kernel.with_seed(spec, kernel.seed(spec) + 5)) == spec_hash(spec)
    assert kernel.seed(kernel.with_seed(spec, 7)) == 7


def test_buckets_split_into_single_bucket_specs(kernel):
    spec = _buildable(kernel) or kernel.default_spec()
    buckets = kernel.buckets(spec)
    assert buckets
    for bucket in buckets:
        one = kernel.for_bucket(spec, bucket)
        assert kernel.buckets(one) == [bucket]
        assert kernel.items_per_call(bucket) >= 1
        if len(bucket) == 1:
            assert kernel.pick_bucket(spec, next(iter(bucket.values()))) == bucket


def test_presets_load_validate_and_have_names_of_their_own(kernel):
    if kernel.preset_dir is None or not Path(kernel.preset_dir).is_dir():
        pytest.skip(f"{kernel.name} brings no presets")
    others = {
        p.stem
        for k in registry.available()
        if k is not kernel and k.preset_dir is not None
        for p in Path(k.preset_dir).glob("*.toml")
    }
    files = sorted(Path(kernel.preset_dir).glob("*.toml"))
    assert files
    for path in files:
        spec = load(path)
        assert isinstance(spec, kernel.spec_class) and spec.name == path.stem
        assert [p for p in validate(spec) if p.severity == "error"] == []
        assert path.stem not in others


def test_own_fields_are_reported_once(kernel):
    spec = kernel.default_spec()
    problems = validate(spec)
    assert len({(p.field, p.message) for p in problems}) == len(problems)


def test_the_signature_is_what_the_build_traces(kernel):
    import torch

    spec, built = _built_or_skip(kernel)
    signature = kernel.io_signature(spec)
    with torch.no_grad():
        got = built.module(*built.inputs)
    got = got if isinstance(got, tuple) else (got,)
    if signature is None:
        return
    ins, outs = signature
    assert [t.name for t in ins] == [f"input{i}" for i in range(len(built.inputs))]
    assert tuple(t.role for t in ins) == built.input_names
    # The roles are the forward's own parameter names, in order (up to a *rest): positional binding cannot go wrong.
    named = [
        p.name
        for p in inspect.signature(built.module.forward).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    assert named[: len(ins)] == list(built.input_names)[: len(named)]
    for sig, t in zip(ins, built.inputs):
        assert (sig.dtype, sig.shape) == (str(t.dtype).removeprefix("torch."), tuple(t.shape))
    assert [t.name for t in outs] == [f"output{i}" for i in range(len(got))]
    assert tuple(t.role for t in outs) == built.output_names
    for sig, t in zip(outs, got):
        assert (sig.dtype, sig.shape) == (str(t.dtype).removeprefix("torch."), tuple(t.shape))


def test_the_trace_equals_eager_on_fresh_inputs(kernel):
    import torch

    spec, built = _built_or_skip(kernel)
    traced = torch.jit.trace(built.module, built.inputs, strict=False)
    fresh = kernel.example_inputs(kernel.with_seed(spec, 99))  # a trace that baked values in fails here
    with torch.no_grad():
        for inputs in (built.inputs, fresh):
            want, got = built.module(*inputs), traced(*inputs)
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                assert torch.equal(a, b)


def test_the_reproduction_source_rebuilds_the_job_with_torch_alone(kernel):
    import torch

    spec, built = _built_or_skip(kernel)
    source = kernel.reproduce_source(spec, built)
    assert "neffbench" not in source
    namespace: dict = {}
    exec(compile("import torch\n" + source, "reproduce.py", "exec"), namespace)
    inputs = namespace["example_inputs"]()
    assert len(inputs) == len(built.inputs) and all(torch.equal(a, b) for a, b in zip(inputs, built.inputs))
    with torch.no_grad():
        got, want = namespace["build_module"]()(*inputs), built.module(*built.inputs)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert torch.equal(a, b)


def test_the_preview_draws_finite_plots_and_refuses_nothing_valid(kernel):
    spec = _buildable(kernel)
    if spec is None:
        pytest.skip(f"{kernel.name} has no spec that builds without the user's code")
    kernel.preview_preload()
    preview = kernel.preview(spec, kernel.buckets(spec)[0])
    if preview is None or not hasattr(preview, "plots"):
        pytest.skip(f"{kernel.name} has no plot preview of its own")
    assert preview.plots and preview.to_json()["plots"]
    for plot in preview.plots:
        for s in plot.series:
            x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
            assert np.isfinite(x).all() and np.isfinite(y).all() and y.size
            assert len(x) == (len(y) + 1 if plot.kind == "histogram" else len(y))
