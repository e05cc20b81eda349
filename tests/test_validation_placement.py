"""Every problem of a spec file at once, each under its own field: wrong types and unknown keys beside range and
cross-field problems, in ``check`` and in the window's form."""

from __future__ import annotations

from neffbench.spec import load_partial, validate

BAD = """kernel = "rope"
name = "bad spec!"
colour = "red"
[model]
head_size = "big"
rotary_dim = 300
num_heads_q = -4
num_heads_k = 5000
head_sise = 3
[rope]
rope_type = "llama3"
low_freq_factor = 4.0
high_freq_factor = 1.0
[inputs]
num_tokens = [0, 8, 8, 99999999]
[compiler]
target = "trn9"
extra_args = ["--target", "inf2", "--lnc"]
"""

# field -> a piece of each of its problems
EXPECTED = {
    "name": ["Name must be 1-64 letters"],
    "model.rotary_dim": ["Rotary dim (300) cannot be larger than the head size"],
    "model.num_heads_q": ["Query heads must be at least 1; got -4."],
    "model.num_heads_k": ["Key heads must be at most 1024; got 5000."],
    "rope.high_freq_factor": ["must be greater than the low-freq factor"],
    "inputs.num_tokens": ["at least 1 token; got 0", "Bucket 8 is listed twice", "at most 1048576 tokens"],
    "compiler.target": ["Target must be one of"],
    "compiler.extra_args": ["--target inf2 but the target field is trn9", "--lnc but the lnc field is unset"],
}


def _write(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD)
    return path


def test_a_file_with_unreadable_values_still_gets_every_other_check(tmp_path):
    spec, held = load_partial(_write(tmp_path))
    assert {p.field for p in held} == {"colour", "model.head_size", "model.head_sise"}
    by_field: dict[str, list[str]] = {}
    for p in validate(spec):
        by_field.setdefault(p.field, []).append(p.message)
    for field, pieces in EXPECTED.items():
        for piece in pieces:
            assert any(piece in m for m in by_field.get(field, [])), (field, piece, by_field.get(field))


def test_check_lists_every_problem_of_the_file(tmp_path, neffbench_in_process):
    done = neffbench_in_process("check", str(_write(tmp_path)))
    assert done.returncode == 2
    assert "error: model.head_size: must be a whole number, got 'big'." in done.stderr
    assert "Did you mean 'head_size'?" in done.stderr and "error: colour: Unknown key 'colour'." in done.stderr
    for field, pieces in EXPECTED.items():
        for piece in pieces:
            assert any(line.startswith(f"error: {field}: ") and piece in line for line in done.stderr.splitlines()), (
                field,
                piece,
            )


def test_the_form_shows_each_problem_under_its_field(window, qtbot, tmp_path):
    assert window.open_spec(_write(tmp_path))
    form = window.form.current()
    text = {key: form.problem_label(key).text().replace("\u200b", "") for key in EXPECTED}
    for field, pieces in EXPECTED.items():
        assert form.problem_label(field).isVisible(), field
        for piece in pieces:
            assert piece in text[field], (field, piece, text[field])
    head = form.problem_label("model.head_size")
    assert "Head size in the file must be a whole number, got 'big'." in head.text().replace("\u200b", "")
    assert "Unknown key 'head_sise' in Model" in form.banner.text() and "'colour'" in form.banner.text()
    assert not window.compile_action.isEnabled()
    # Changing the field drops what the file held for it; the unknown keys go with the first edit.
    form.editor("model.head_size").widget.setValue(256)
    assert not form.problem_label("model.head_size").isVisible()
    assert form.banner.isHidden()
    assert (
        "head size (256)" in form.problem_label("model.rotary_dim").text()
        or not form.problem_label("model.rotary_dim").isVisible()
    )
