"""What this host has installed (Python, torch, Qt, the Neuron toolchain, devices, runtimes) and which backend a
compile gets: facts only, no printing (``neffbench doctor``'s report is ``neffbench.doctor``)."""
