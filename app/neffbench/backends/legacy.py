"""``neuron``: torch_neuronx.trace, the legacy XLA flavour of torch-neuronx (SDK ≤ 2.31), writing model.pt."""

from __future__ import annotations

import time
from typing import Any

from neffbench.backends.base import Backend, JobContext, JobFailure, Traced
from neffbench.backends.compiler_command import LOGFILE_NAME, base_args, equivalent_command, job_compiler_args
from neffbench.backends.tracing import neuron_trace
from neffbench.kernels.api import Built


class LegacyTrace(Backend):
    name = "neuron"
    label = "torch_neuronx.trace (legacy, SDK ≤ 2.31)"
    short = "neuron (trace, legacy)"
    flavour_needed = "legacy"
    asks_compiler_version = True
    uses_cpu_backend = True  # torch_neuronx.trace(cpu_backend=True) compiles on a host without a device
    keeps_state_as = (
        "input_output_aliases: the state is parameters of the traced module, kept on the device and updated from "
        "the outputs that alias them (torch_neuronx.trace)"
    )

    @classmethod
    def wrong_flavour(cls, version: str | None, is_what: str) -> str:
        return (
            f"the neuron backend (torch_neuronx.trace, legacy, SDK ≤ 2.31) was requested but torch_neuronx "
            f"{version} is {is_what}, which has no torch_neuronx.trace: use --backend torchneuron"
        )

    @classmethod
    def cache_part(cls, spec: Any) -> Any:
        return base_args(spec)

    @classmethod
    def advice(cls, facts: Any) -> list[str]:
        from neffbench.toolchain.choose import use_cpu_backend

        cpu, why_cpu = use_cpu_backend("auto", facts)
        return [
            f"{'Tracing with cpu_backend=True' if cpu else 'Tracing on the device'}: {why_cpu}; "
            f"{'device verification is skipped' if cpu else 'outputs are verified on the device'}."
        ]

    @classmethod
    def complex_advice(
        cls, ops: str, outside: list[Any], neuronx_cc: str | None, torch_version: str
    ) -> list[tuple[str, str]] | None:
        from neffbench.backends.complex_ops import legacy_advice  # torch: only in the worker and the probe

        return legacy_advice(ops, outside, neuronx_cc)

    def trace(self, job: JobContext, spec: Any, built: Any, report: Any, kernel: Any) -> Traced:
        job.cpu_trace(report, built, blocking=False)
        if kernel.runs_user_code:  # analyze compiles each operator on its own: worth it for unknown code
            self._analyze(job, built)
        return Traced(traced=self._trace(job, spec, built))

    def verify(self, step: Traced, built: Any, spec: Any, reference: Any) -> dict[str, Any]:
        from neffbench.backends import verify as verifying  # torch: the worker's only

        if self.cpu_backend:
            return verifying.skipped(
                spec,
                f"device verification skipped: traced with cpu_backend=True "
                f"({self.cpu_backend_reason}), so the NEFF cannot run on this host",
                built,
                reference,
            )
        return verifying.verify(
            step.traced, built, spec, reference, where="Neuron device", on_device=True, keeps_state=bool(built.state)
        )

    @classmethod
    def reproduce_script(cls, spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None = None) -> str:
        from neffbench.backends import legacy_reproduce

        return legacy_reproduce.render(spec, job_id=job_id, built=built, weights=weights)

    def _trace(self, job: JobContext, spec: Any, built: Any) -> Any:
        from neffbench.backends.eager import copies

        module, inputs, aliases = built.module, copies(built.inputs), {}
        if built.state:
            # The documented way to keep state on the device: parameters of the module, aliased to the outputs
            # that return their new values (the wrapper returns them after its own outputs).
            module = built.module.kept(parameters=True)
            inputs, aliases = inputs[: len(inputs) - len(built.state)], module.aliases()
            job.out.event(self.state_event(built))
        compiler_dir = job.job_dir / "compiler"
        compiler_dir.mkdir(exist_ok=True)
        args = job_compiler_args(spec, compiler_dir)
        job.out.event(
            {"type": "compiler_command", "requested": equivalent_command(compiler_dir, args), "requested_args": args}
        )
        started: list[float] = []

        def compiler_started() -> None:
            started.append(time.perf_counter())
            job.stage = "compiling"
            job.out.stage("compiling")

        with job.log_tail(compiler_dir, compiler_dir / LOGFILE_NAME, compiler_started):
            traced = neuron_trace(self, module, inputs, compiler_dir, args, aliases)
        if started:
            job.metric("compile_s", round(time.perf_counter() - started[0], 4), "s")
        neffs = sorted(compiler_dir.glob("**/*.neff"))
        if not neffs:
            raise JobFailure("torch_neuronx.trace returned but no NEFF was found under compiler/")
        for neff in neffs:
            job.out.line(f"neffbench: NEFF {neff.relative_to(job.job_dir)} ({neff.stat().st_size} bytes)")
        return traced

    def _analyze(self, job: JobContext, built: Any) -> None:
        """torch_neuronx.analyze where the installed release has it: every operator neuronx-cc cannot
        compile, with where it is called, before the compile itself spends minutes finding out."""
        analyze = getattr(self.torch_neuronx, "analyze", None)
        if analyze is None:
            return
        from neffbench.backends.eager import copies

        workdir = job.job_dir / "analyze"
        t0 = time.perf_counter()
        try:
            result = analyze(built.module, copies(built.inputs), compiler_workdir=str(workdir))
        except Exception as exc:  # noqa: BLE001 - analyze failing says nothing certain about the compile
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = f"torch_neuronx.analyze failed ({type(exc).__name__}: {first}); the compile goes ahead."
            job.out.line(f"neffbench: warning: {message}")
            job.out.event({"type": "warning", "message": message})
            return
        job.metric("analyze_s", round(time.perf_counter() - t0, 4), "s")
        unsupported = result.get("unsupported_operators") or []
        job.out.event(
            {
                "type": "analyze",
                "support_percentage": result.get("support_percentage"),
                "supported_operators": result.get("supported_operators"),
                "unsupported_operators": [{k: op.get(k) for k in ("kind", "failureAt", "call")} for op in unsupported],
            }
        )
        job.out.line(
            f"neffbench: torch_neuronx.analyze: {result.get('support_percentage')} of the operators are supported"
        )
        for op in unsupported:
            call = str(op.get("call") or "").strip().splitlines()
            where = f", called at {call[0]}" if call else ""
            message = f"neuronx-cc cannot compile {op.get('kind')} (failed at {op.get('failureAt')}){where}."
            job.out.line(f"neffbench: warning: {message}")
            job.out.event({"type": "warning", "message": message})
