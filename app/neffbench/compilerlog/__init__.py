"""Reading neuronx-cc output as it really looks: line formats, errors, passes, exit status, error-code help."""
