#: ${tensors_source}

import importlib
import importlib.util


def load_entry(text: str):
    """'package.module:attr' imported, or 'path/to/file.py:attr' executed, as neffbench resolves them."""
    target, _, attr = text.rpartition(":")
    if target.endswith(".py"):
        spec = importlib.util.spec_from_file_location("neffbench_user_" + Path(target).stem, target)
        holder = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = holder
        sys.path.insert(0, str(Path(target).parent))
        spec.loader.exec_module(holder)
    else:
        holder = importlib.import_module(target)
    obj = holder
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def build_value(value):
    """A kwargs value; a table with 'entry' builds a nested object (a config)."""
    if isinstance(value, dict) and "entry" in value:
        obj = load_entry(value["entry"])
        if value.get("call", "factory") == "object":
            return obj
        return obj(**{k: build_value(v) for k, v in (value.get("kwargs") or {}).items()})
    if isinstance(value, dict):
        return {k: build_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [build_value(v) for v in value]
    return value

#: ${hf_compat}
# ---- this job's values ----

ENTRY = "${entry}"  # resolved to ${resolved}
ENTRY_SHA256 = "${entry_sha256}"
CALL = "${call}"  # factory: ENTRY(**KWARGS) builds the module; object: ENTRY is it
MODULE_DTYPE = "${module_dtype}"  # "keep", or the dtype the module is cast to before tracing
IMPORT_PATH = "${import_path}"
KWARGS = "${kwargs}"
INPUT_NAMES = "${input_names}"  # the state comes from the module
INPUT_SPECS = "${input_specs}"
EXAMPLES = "${examples}"
BUCKET = "${bucket}"
SEED = "${seed}"
WEIGHTS_SEED = "${weights_seed}"  # every random generator is seeded with it before the module is built


# The wrapper neffbench traced, verbatim: tensors in by name, constants bound, a flat tuple out.
#: ${wrapper}


def seed_everything() -> None:
    import random

    random.seed(WEIGHTS_SEED)
    torch.manual_seed(WEIGHTS_SEED)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(WEIGHTS_SEED % 2**32)


def build_module() -> torch.nn.Module:
    sys.path[:0] = IMPORT_PATH
    obj = load_entry(ENTRY)
    # As neffbench does (before the arguments are made and again before the module is): randomly initialised
    # weights are then the ones the job compiled.
    seed_everything()
    kwargs = {k: build_value(v) for k, v in KWARGS.items()} if CALL == "factory" else {}
    seed_everything()
    inner = obj(**kwargs) if CALL == "factory" else obj
    if isinstance(inner, torch.nn.Module):
        inner.eval()
        if MODULE_DTYPE != "keep":
            inner.to(getattr(torch, MODULE_DTYPE))
    return NeffbenchWrapper(inner).eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the wrapper's order, as neffbench built them."""
    generator = torch.Generator().manual_seed(SEED)
    from_examples = {}
    if EXAMPLES:
        torch.manual_seed(SEED)
        from_examples = load_entry(EXAMPLES)(**BUCKET)
    return tuple(build(parse(INPUT_SPECS[name]), BUCKET, generator) if name in INPUT_SPECS
                 else from_examples[name] for name in INPUT_NAMES)
