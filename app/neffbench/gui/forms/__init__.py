"""The spec form: field editors from the field descriptions, the kernel forms, inline problem lines."""
