"""The generic module kernel: any nn.Module or function, inputs bound by name, one NEFF per bucket."""
