"""A preset's description that states a compiler argument (the seed's --lnc=2) is kept only where it still holds."""

from __future__ import annotations

import dataclasses

from neffbench.jobs import CompileJob
from neffbench.presets import load_preset
from neffbench.schema.described import held_claims, with_held_claims
from neffbench.spec import load, spec_hash

SEED = load_preset("seed")
UNCLAIMED = "Seed example: head_size 64, rotary_dim 64, 32 query / 8 key heads, max_pos 128, base 500000, one token."


def _compiled(**compiler):
    return dataclasses.replace(SEED, compiler=dataclasses.replace(SEED.compiler, **compiler))


def test_a_claim_the_arguments_still_make_is_kept():
    assert held_claims(SEED).endswith("one token, --lnc=2.")
    assert with_held_claims(SEED) is SEED
    assert held_claims(_compiled(optlevel=3)).endswith("--lnc=2.")  # other arguments changed, this one holds


def test_a_claim_the_arguments_no_longer_make_is_dropped_and_the_hash_stays():
    for changed in (_compiled(lnc=1), _compiled(lnc=None)):
        assert held_claims(changed) == UNCLAIMED
        assert spec_hash(with_held_claims(changed)) == spec_hash(changed)
    described = dataclasses.replace(SEED, description="Quick build: -O1, --auto-cast=none.")
    assert held_claims(described) == "Quick build: --auto-cast=none."  # -O2 is compiled, not -O1


def test_a_job_compiled_with_other_arguments_does_not_carry_the_claim(tmp_path):
    runner = CompileJob(_compiled(lnc=1), workdir=tmp_path, backend="cpu-check")
    job_dir = runner.start()
    try:
        assert load(job_dir / "spec.toml").description == UNCLAIMED
    finally:
        runner.cancel()
        runner.wait()
