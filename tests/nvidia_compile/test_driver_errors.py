"""The NVIDIA driver's errors are the ones core and users catch (needs neither a GPU nor ptxas)."""
from __future__ import annotations

import pickle

import tritium


def test_out_of_resources_is_cores():
    from tritium_nvidia.driver import OutOfResources
    err = OutOfResources("kernel `k` needs 300000 bytes of shared memory per program, but device 0 offers at most "
                         "232448: lower the meta-parameters that size its tiles (BM=256)")
    # the autotuner skips configs raising tritium.OutOfResources; Triton users catch it under that name
    assert isinstance(err, tritium.OutOfResources) and isinstance(err, RuntimeError)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is OutOfResources and str(again) == str(err)
