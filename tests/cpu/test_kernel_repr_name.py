"""A ``repr=`` given to @jit names each compiled specialization, as in Triton (its ``ast_to_ttir`` names the kernel
``fn.repr(specialization)``, the part after the last dot; test_core.py::test_value_specialization reads
``CompiledKernel.name``). tritium named every kernel after the Python function, and ``repr(kernel)`` called the
user's function with the JITFunction (which has no ``signature`` by name), raising."""
import numpy as np

import tritium as triton
import tritium.language as tl


def _name_by_types(spec):
    ones = "_".join(k for k, v in spec.constants.items() if v == 1)
    return f"mod.scaled_{spec.signature['n']}_{ones}"


@triton.jit(repr=_name_by_types)
def _named(X, n, one):
    tl.store(X, n + one)


def test_repr_names_each_specialization_as_triton():
    # Triton's test_core.py::test_value_specialization: the kernel's name is repr(specialization) after its
    # last dot; repr(kernel) itself does not call it
    x = np.zeros(1, np.int64)
    small = _named.warmup(x, 5, 1, grid=(1, ))
    big = _named.warmup(x, 2**40, 1, grid=(1, ))
    assert (small.name, big.name) == ("scaled_i32_one", "scaled_i64_one")
    _named[(1, )](x, 2**40, 1)
    assert x[0] == 2**40 + 1
    assert repr(_named).startswith("JITFunction(")


@triton.jit
def _plain(X, n):
    tl.store(X, n)


def test_module_names_the_kernel_it_holds():
    # the module's tt.kernel attribute names the kernel function (what written-argument analysis looks up), with
    # or without a repr=, whatever attributes the arguments carry
    x = np.zeros(1, np.int64)
    for k in (_plain.warmup(x, 32, grid=(1, )), _named.warmup(x, 5, 1, grid=(1, ))):
        assert f'tt.kernel = "{k.name}"' in k.asm["ttir"]
        assert f"func.func public @{k.name}(" in k.asm["ttir"]
