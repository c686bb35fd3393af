"""
Fused attention, forward and backward
=====================================

softmax(Q K^T * scale) V for [Z, H, N, D] fp16 tensors, in the shape of Triton's tutorial 06: the forward pass
keeps a running maximum and sum per row (online softmax) so the N x N scores never reach memory, and stores
the log-sum-exp per row (M); the backward pass recomputes the scores block by block from M: one kernel gives
each program a block of keys (dK, dV: loop over the queries) and a block of queries (dQ: loop over the keys).
Causal attention skips the blocks above the diagonal and masks the diagonal ones.

Run: python examples/07-fused-attention.py   (on a GPU: checks against torch and times tritium beside
Triton 3.6 and torch's scaled_dot_product_attention, in one process)
"""
import math

import tritium as triton
import tritium.language as tl


@triton.jit
def _fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn, start_m, qk_scale,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr, offs_m, offs_n,
               N_CTX: tl.constexpr):
    # STAGE 1: the blocks left of the diagonal; 2: the diagonal block (masked); 3: every block
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    K_ptrs += lo * stride_kn
    V_ptrs += lo * stride_vn
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(K_ptrs)
        qk = tl.dot(q, k)
        if STAGE == 2:
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        K_ptrs += BLOCK_N * stride_kn
        V_ptrs += BLOCK_N * stride_vn
    return acc, l_i, m_i


@triton.jit
def attn_fwd(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_tok, H, N_CTX: tl.constexpr,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_tok + offs_d[None, :])
    K_ptrs = K + base + offs_d[:, None] + offs_n[None, :] * stride_tok      # K^T, one block of keys
    V_ptrs = V + base + offs_n[:, None] * stride_tok + offs_d[None, :]
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504          # exp(x) = exp2(x / ln 2)
    if STAGE & 1:
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_tok, stride_tok, start_m, qk_scale,
                                   BLOCK_M, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_tok, stride_tok, start_m, qk_scale,
                                   BLOCK_M, BLOCK_N, 2, offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * stride_tok + offs_d[None, :], acc.to(Out.type.element_ty))


@triton.jit
def attn_bwd_preprocess(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    # Delta = rowsum(O * dO), the softmax backward's correction term
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_d = tl.arange(0, HEAD_DIM)
    ptrs = off_hz.to(tl.int64) * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_d[None, :]
    o = tl.load(O + ptrs).to(tl.float32)
    do = tl.load(DO + ptrs).to(tl.float32)
    tl.store(Delta + off_hz * N_CTX + off_m, tl.sum(o * do, axis=1))


@triton.jit
def _bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr,
              HEAD_DIM: tl.constexpr, start_n, start_m, num_steps, MASK: tl.constexpr):
    # one block of keys (k, v) against num_steps blocks of BLOCK_M1 queries from start_m
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_d = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_d[:, None]
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_d[None, :]
    tl.static_assert(BLOCK_N1 % BLOCK_M1 == 0)
    curr_m = start_m
    for _ in range(num_steps):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M1)
        m = tl.load(M + offs_m)
        pT = tl.math.exp2(tl.dot(k, qT) - m[None, :])       # k is pre-scaled by sm_scale / ln 2
        if MASK:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(do_ptrs)
        dv += tl.dot(pT.to(tl.float16), do)
        Di = tl.load(D + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dk += tl.dot(dsT.to(tl.float16), tl.trans(qT))
        curr_m += BLOCK_M1
        qT_ptrs += BLOCK_M1 * stride_tok
        do_ptrs += BLOCK_M1 * stride_tok
    return dk, dv


@triton.jit
def _bwd_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
            HEAD_DIM: tl.constexpr, start_m, start_n, num_steps, MASK: tl.constexpr):
    # one block of queries against num_steps blocks of BLOCK_N2 keys from start_n
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_d = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + (start_n + tl.arange(0, BLOCK_N2))[None, :] * stride_tok + offs_d[:, None]
    vT_ptrs = V + (start_n + tl.arange(0, BLOCK_N2))[None, :] * stride_tok + offs_d[:, None]
    Di = tl.load(D + offs_m)
    tl.static_assert(BLOCK_M2 % BLOCK_N2 == 0)
    curr_n = start_n
    for _ in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        p = tl.math.exp2(tl.dot(q, kT) - m)
        if MASK:
            offs_n = curr_n + tl.arange(0, BLOCK_N2)
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        dq += tl.dot(ds.to(tl.float16), tl.trans(kT))
        curr_n += BLOCK_N2
        kT_ptrs += BLOCK_N2 * stride_tok
        vT_ptrs += BLOCK_N2 * stride_tok
    return dq


@triton.jit
def attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, H, N_CTX,
             BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
             BLK_SLICE_FACTOR: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    LN2: tl.constexpr = 0.6931471824645996
    bhid = tl.program_id(2)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    pid = tl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    offs_d = tl.arange(0, HEAD_DIM)

    # dK and dV of keys [start_n, start_n + BLOCK_N1)
    start_n = pid * BLOCK_N1
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_d[None, :])
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_d[None, :])
    if CAUSAL:
        # the diagonal block in narrower, masked steps; then the queries below it
        MASK_BLOCK_M1: tl.constexpr = BLOCK_M1 // BLK_SLICE_FACTOR
        num_steps = BLOCK_N1 // MASK_BLOCK_M1
        dk, dv = _bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, MASK_BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n,
                           start_n, num_steps, MASK=True)
        start_m = start_n + num_steps * MASK_BLOCK_M1
    else:
        start_m = 0
    num_steps = (N_CTX - start_m) // BLOCK_M1
    dk, dv = _bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m,
                       num_steps, MASK=False)
    tl.store(DV + offs_n[:, None] * stride_tok + offs_d[None, :], dv.to(DV.type.element_ty))
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_d[None, :], dk.to(DK.type.element_ty))

    # dQ of queries [start_m, start_m + BLOCK_M2)
    start_m = pid * BLOCK_M2
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_d[None, :])
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_d[None, :])
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    m = tl.load(M + offs_m)[:, None]
    if CAUSAL:
        MASK_BLOCK_N2: tl.constexpr = BLOCK_N2 // BLK_SLICE_FACTOR
        end_n = start_m + BLOCK_M2
        num_steps = BLOCK_M2 // MASK_BLOCK_N2
        dq = _bwd_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2, MASK_BLOCK_N2, HEAD_DIM, start_m,
                     end_n - num_steps * MASK_BLOCK_N2, num_steps, MASK=True)
        end_n -= num_steps * MASK_BLOCK_N2
    else:
        end_n = N_CTX
    num_steps = end_n // BLOCK_N2
    dq = _bwd_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m,
                 end_n - num_steps * BLOCK_N2, num_steps, MASK=False)
    dq *= LN2                                 # K was pre-scaled by sm_scale / ln 2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_d[None, :], dq.to(DQ.type.element_ty))


#: forward (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dim, from the tutorial's autotune space
FWD_CONFIGS = {64: (128, 64, 4, 3), 128: (128, 128, 8, 3)}
#: the tutorial's backward settings
BWD = dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2, num_warps=4, num_stages=5)


#: the forward's autotune space: the tutorial's (BLOCK_M 64/128, BLOCK_N 64/128, 2-4 stages, 8 warps only at 128 x
#: 128), cut to the configurations that won on either side in an H200 sweep of the whole space and their
#: neighbours, so that tuning both sides stays within a minute (PERF.md, issue 14, fifth session)
FWD_SPACE = {64: [(128, 64, 4, 2), (128, 64, 4, 3), (128, 64, 4, 4), (128, 128, 4, 2), (128, 128, 4, 3),
                  (128, 128, 8, 2), (128, 128, 8, 3), (64, 64, 4, 3), (64, 128, 4, 3)],
             128: [(128, 128, 8, 2), (128, 128, 8, 3), (64, 64, 4, 3), (64, 64, 4, 2), (128, 64, 8, 3)]}


def _tuned_space(configs, named_args, **kwargs):
    # this head dim's part of the space; the causal split needs BLOCK_M >= BLOCK_N
    D, causal = kwargs["HEAD_DIM"], kwargs["STAGE"] == 3
    return [c for c in configs if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages) in FWD_SPACE[D]
            and not (causal and c.kwargs["BLOCK_M"] < c.kwargs["BLOCK_N"])]


attn_fwd_tuned = triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
             for bm, bn, w, s in sorted({c for cs in FWD_SPACE.values() for c in cs})],
    key=["N_CTX", "HEAD_DIM", "STAGE"], prune_configs_by={"early_config_prune": _tuned_space})(attn_fwd)


def forward(q, k, v, causal, sm_scale, cfg=None):
    """(O, M) for contiguous [Z, H, N, D] q, k, v; ``cfg`` "tune": the autotuned kernel (FWD_SPACE)."""
    import torch
    Z, H, N, D = q.shape
    o = torch.empty_like(q)
    M = torch.empty((Z, H, N), device=q.device, dtype=torch.float32)
    args = (q, k, v, sm_scale, M, o, q.stride(0), q.stride(1), q.stride(2), H)
    if cfg == "tune":
        attn_fwd_tuned[lambda meta: (triton.cdiv(N, meta["BLOCK_M"]), Z * H)](
            *args, N_CTX=N, HEAD_DIM=D, STAGE=3 if causal else 1)
        return o, M
    BM, BN, warps, stages = cfg or FWD_CONFIGS[D]
    attn_fwd[(triton.cdiv(N, BM), Z * H)](*args, N_CTX=N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                                          STAGE=3 if causal else 1, num_warps=warps, num_stages=stages)
    return o, M


def tuned_config(mod) -> str:
    c = mod.attn_fwd_tuned.best_config
    return f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']}/{c.num_warps}w/{c.num_stages}s" if c else "?"


def backward(q, k, v, o, M, do, causal, sm_scale, bwd=None):
    """(dQ, dK, dV) from the forward's O and M."""
    import torch
    bwd = dict(bwd or BWD)
    Z, H, N, D = q.shape
    assert q.stride() == k.stride() == v.stride() == o.stride() == do.stride()
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    k_scaled = k * (sm_scale * 1.4426950408889634)
    delta = torch.empty_like(M)
    attn_bwd_preprocess[(N // 128, Z * H)](o, do, delta, N, BLOCK_M=128, HEAD_DIM=D)
    attn_bwd[(N // bwd["BLOCK_N1"], 1, Z * H)](q, k_scaled, v, sm_scale, do, dq, dk, dv, M, delta, q.stride(0),
                                               q.stride(1), q.stride(2), H, N, HEAD_DIM=D, CAUSAL=causal, **bwd)
    return dq, dk, dv


def reference(q, k, v, do, causal, sm_scale):
    """O, dQ, dK, dV through torch autograd in float32."""
    import torch
    qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
    o = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, scale=sm_scale)
    o.backward(do.float())
    return o.detach(), qf.grad, kf.grad, vf.grad


def rel_err(x, ref) -> float:
    return ((x.float() - ref).norm() / ref.norm()).item()


def check(mod, Z, H, N, D, causal, device, seed=0, fwd_cfg=None, bwd=None):
    """Largest relative error of O, dQ, dK, dV against torch (fresh random inputs, outputs poisoned)."""
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    q, k, v, do = (torch.randn((Z, H, N, D), device=device, dtype=torch.float16, generator=g) for _ in range(4))
    sm_scale = 1 / math.sqrt(D)
    o, M = mod.forward(q, k, v, causal, sm_scale, fwd_cfg)
    dq, dk, dv = mod.backward(q, k, v, o, M, do, causal, sm_scale, bwd)
    refs = reference(q, k, v, do, causal, sm_scale)
    errs = [rel_err(x, r) for x, r in zip((o, dq, dk, dv), refs)]
    assert all(e < 1e-2 for e in errs), f"relative errors O, dQ, dK, dV {errs}"
    return max(errs)


def main():
    from _bench import device, interleaved, median_ms, triton_twin
    import sys
    dev = device()
    if dev == "cpu":
        for causal in (False, True):
            err = check(sys.modules[__name__], 1, 2, 128, 64, causal, "cpu",
                        fwd_cfg=(64, 32, 4, 1), bwd=dict(BWD, BLOCK_M1=32, BLOCK_N1=64, BLOCK_M2=64, BLOCK_N2=32))
            print(f"attention fwd+bwd fp16 Z=1 H=2 N=128 D=64 causal={causal} (cpu): max rel err {err:.1e}")
        return
    import torch
    me = sys.modules[__name__]
    twin = triton_twin(__file__)
    for D in (64, 128):
        for causal in (False, True):
            print(f"check D={D} causal={causal}: tritium rel err {check(me, 2, 4, 1024, D, causal, dev):.1e}"
                  + (f", triton {check(twin, 2, 4, 1024, D, causal, dev):.1e}" if twin else ""), flush=True)
    Z, H, N = 4, 32, 4096
    rows = []
    for D in (64, 128):
        for causal in (False, True):
            q, k, v, do = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(4))
            sm = 1 / math.sqrt(D)
            flops = 4 * Z * H * N * N * D * (0.5 if causal else 1.0)
            fwd, bwd = {}, {}
            for name, mod in (("tritium", me), ("triton", twin)):
                if mod is None:
                    continue
                o, M = mod.forward(q, k, v, causal, sm)
                fwd[name] = lambda mod=mod: mod.forward(q, k, v, causal, sm)
                bwd[name] = lambda mod=mod, o=o, M=M: mod.backward(q, k, v, o, M, do, causal, sm)
            tf, tb = interleaved(fwd, dev), interleaved(bwd, dev)
            res = {name: (tf[name], tb[name]) for name in fwd}
            # each side autotuned over the same space (FWD_SPACE); the configs each picks are printed
            tuned = {}
            for name, mod in (("tritium", me), ("triton", twin)):
                if mod is not None:
                    mod.forward(q, k, v, causal, sm, "tune")
                    tuned[name] = lambda mod=mod: mod.forward(q, k, v, causal, sm, "tune")
            tt = interleaved(tuned, dev)
            fl = flops / 1e12
            ratio = tt["triton"] / tt["tritium"] if "triton" in tt else float("nan")
            line = (f"attention fwd fp16 Z={Z} H={H} N={N} D={D} causal={causal!s:5} autotuned: tritium "
                    f"{fl / (tt['tritium'] * 1e-3):.0f} TFLOP/s ({tuned_config(me)}) | Triton "
                    f"{fl / (tt['triton'] * 1e-3) if 'triton' in tt else float('nan'):.0f} "
                    f"({tuned_config(twin) if twin else '-'}) | ratio {ratio:.2f}x")
            print(line, flush=True)
            rows.append(line)
            qs, ks, vs = (t.detach().requires_grad_() for t in (q, k, v))
            fwd = lambda: torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)  # noqa
            out = fwd()
            res["sdpa"] = (median_ms(fwd, dev), median_ms(lambda: torch.autograd.grad(out, (qs, ks, vs), do,
                                                                                     retain_graph=True), dev))
            for i, what in enumerate(("fwd", "bwd")):
                fl = flops * (2.5 if what == "bwd" else 1.0)
                tf = {n: fl / (t[i] * 1e-3) / 1e12 for n, t in res.items()}
                ratio = tf["tritium"] / tf["triton"] if "triton" in tf else float("nan")
                line = (f"attention {what} fp16 Z={Z} H={H} N={N} D={D} causal={causal!s:5}: tritium "
                        f"{tf['tritium']:.0f} TFLOP/s | Triton {tf.get('triton', float('nan')):.0f} | ratio "
                        f"{ratio:.2f}x | sdpa {tf['sdpa']:.0f}")
                print(line, flush=True)
                rows.append(line)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
