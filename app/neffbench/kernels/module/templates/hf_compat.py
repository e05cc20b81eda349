
# ---- ${why} ----
#: ${hf_masks}

import transformers.masking_utils  # noqa: E402 - loads the mask code that the next line changes
masks_without_vmap()
