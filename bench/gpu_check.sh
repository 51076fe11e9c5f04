#!/usr/bin/env bash
# burn-cuda's GPU verification (issue 18) as one command, for an NVIDIA machine that has CuPy,
# PyTorch CUDA, pytest-xdist and scikit-learn installed but no package index. Our packages (and the
# MPICH wheel, for the NCCL test's mpiexec) travel as wheels in .whl, built beforehand with
#     pip wheel --no-deps -w .whl packages/burn-{core,ndarray,autodiff,cuda,fusion,mpi}
#     pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl mpich
# Usage: bash bench/gpu_check.sh LOG_DIR
# Logs: env.log, bench.log (bench/gpu.py), suite_cuda.log, suite_autodiff_cuda.log,
# suite_fusion_cuda.log, misc.log (burn-cuda's tests incl. NCCL, records cuda <-> ndarray, digits).
set -u
out=${1:?usage: bash bench/gpu_check.sh LOG_DIR}
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
{
    nvidia-smi
    python3 -c "import cupy, torch, numpy; print('cupy', cupy.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__)"
    python3 -c "import cupy.cuda.nccl as n; print('cupy nccl available:', n.available)"
    python3 -c "import cupy; print('cupy bfloat16:', hasattr(cupy, 'bfloat16'))"
    burn backends
    burn engines
} >"$out/env.log" 2>&1

# Timings first, on a quiet GPU.
{
    timeout -s INT -k 10 120 python3 bench/gpu.py --backends "${BURN_GPU_BENCH_BACKENDS:-autodiff(cuda)}"
    timeout -s INT -k 10 40 python3 bench/gpu_overhead.py
    timeout -s INT -k 10 60 python3 bench/gpu_graph_probe.py
} >"$out/bench.log" 2>&1

# The suites side by side (16 cores); SIGINT at the limit still prints pytest's summary.
pytest_=(python3 -m pytest -p no:cacheprovider -v --tb=short -rfE)
timeout -s INT -k 10 200 "${pytest_[@]}" -n 6 --pyargs burn.testing --burn-backend cuda \
    >"$out/suite_cuda.log" 2>&1 &
timeout -s INT -k 10 200 "${pytest_[@]}" -n 6 --pyargs burn.testing --burn-backend "autodiff(cuda)" \
    >"$out/suite_autodiff_cuda.log" 2>&1 &
{
    timeout -s INT -k 10 160 "${pytest_[@]}" -n 3 --pyargs burn.testing --burn-backend "fusion(cuda)"
    timeout -s INT -k 10 50 "${pytest_[@]}" packages/burn-cuda/tests/test_fusion_cuda.py
} >"$out/suite_fusion_cuda.log" 2>&1 &
{
    timeout -s INT -k 10 120 "${pytest_[@]}" packages/burn-cuda/tests --deselect \
        packages/burn-cuda/tests/test_fusion_cuda.py
    timeout -s INT -k 10 60 "${pytest_[@]}" packages/burn-core/tests/test_record_backends.py -k cuda
    timeout -s INT -k 10 90 python3 examples/digits.py --backend cuda --out /tmp/digits \
        --infer-backend ndarray --progress plain
    echo "digits exit status: $?"
} >"$out/misc.log" 2>&1 &
wait
