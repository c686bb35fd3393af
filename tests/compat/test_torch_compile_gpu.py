"""torch.compile on a GPU with ``triton`` resolving to tritium (the compat package): inductor generates Triton
kernels for the GPU, tritium compiles them, and they run either through tritium's launcher or through
inductor's own static launcher, which loads the kernel binary from ``<TRITON_CACHE_DIR>/<hash>/<name>.cubin``
(the cache layout tritium shares with Triton) and passes the arguments itself. Both must match eager.
Skips without a CUDA build of torch and a GPU, and where ``triton`` is a real Triton."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
if not torch.cuda.is_available():
    pytest.skip("needs torch with CUDA and a GPU", allow_module_level=True)
triton = pytest.importorskip("triton", reason="the tritium-triton-compat package is not installed")
if not hasattr(triton, "__tritium_version__"):
    pytest.skip("`triton` is not tritium's compat package", allow_module_level=True)

import torch._dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
import torch.nn.functional as F  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(params=[True, False], ids=["static launcher", "tritium launcher"])
def inductor(request, tmp_path, monkeypatch):
    pytest.importorskip("tritium_nvidia", reason="tritium-nvidia is not installed")
    from tritium import knobs, plugins
    from tritium.runtime.driver import driver
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "tritium"))
    # the session's registry holds the CPU backend only; inductor picks the GPU backend among those registered
    registry = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                                    "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(registry), knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "tritium")
        torch._dynamo.reset()
        # strict: where inductor cannot launch a kernel statically it raises (with the reason) instead of
        # quietly falling back to tritium's launcher, so the first parameter really covers its launcher
        with inductor_config.patch(fx_graph_cache=False, use_static_triton_launcher=request.param,
                                   strict_static_triton_launcher=request.param):
            yield request.param
        torch._dynamo.reset()
        driver.reset_active()


def _check(fn, *args):
    compiled = torch.compile(fn, fullgraph=True)
    torch.testing.assert_close(compiled(*args), fn(*args))
    torch.testing.assert_close(compiled(*args), fn(*args))


def test_pointwise_and_reductions(inductor):
    x = torch.randn(1037, 301, device="cuda")
    y = torch.randn(1037, 301, device="cuda")
    _check(lambda a, b: (torch.sin(a) * 2 + b).relu() - torch.sigmoid(b) / (1 + a.abs()), x, y)
    _check(lambda a: (a.sum(1), a.amax(0), a.mean(), a.argmax(1)), x)
    _check(lambda a: torch.softmax(a * 3, -1), x)


def test_layer_norm_half(inductor):
    w = torch.randn(4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, device="cuda", dtype=torch.float16)
    x = torch.randn(257, 4096, device="cuda", dtype=torch.float16)
    compiled = torch.compile(lambda t: F.layer_norm(t, (4096, ), w, b), fullgraph=True)
    torch.testing.assert_close(compiled(x), F.layer_norm(x.float(), (4096, ), w.float(), b.float()).half(),
                               rtol=2e-3, atol=2e-3)


def test_training_step(inductor):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.LayerNorm(256),
                                torch.nn.Linear(256, 8)).cuda()
    ref = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.LayerNorm(256),
                              torch.nn.Linear(256, 8)).cuda()
    ref.load_state_dict(model.state_dict())
    x, target = torch.randn(40, 64, device="cuda"), torch.randn(40, 8, device="cuda")

    def step(m, opt):
        opt.zero_grad()
        loss = F.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        return loss.detach()

    compiled = torch.compile(model)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    for _ in range(3):
        torch.testing.assert_close(step(compiled, opt), step(ref, ref_opt))
    for p, r in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, r)
