#!/usr/bin/env bash
# Everything this project wants from a GPU, in one run that fits a short lease:
#
#   bash generator/bench/gpu_check.sh OUT_DIR [SECONDS]      (default 500 s in all; PYTHON=… to choose
#                                                   the interpreter, default python3)
#
# run from the repository root on a machine with a CUDA GPU. In order, each stage until a
# share of the time has passed (12, 20, 40, 75, 85 and 97 %):
#   1. cuDNN's RNN reserve space over a grid of shapes   -> OUT_DIR/cudnn_rnn_reserve.csv
#      and the CUDA tests (tests/slow/test_cuda.py), which no CI machine can run
#   2. memory snapshots of the Gemma 2B pair whose reserved peaks the estimate sets apart
#                                                         -> OUT_DIR/snapshots/*.json
#   3. the accuracy page's steps measured on this GPU (validation-cuda.toml), the runs this
#      project can build first
#   4. QLoRA beside LoRA on this GPU (optional/qlora-cuda.toml), with transformers 5 and
#      bitsandbytes (carried as a wheel), not 4.46
#   5. the built-in suite's cuda jobs (`measure --backend cuda`): the levers, models and
#      article pages' steps measured on a GPU
#   then every result written under docs/data/ in one archive -> OUT_DIR/results.tgz
#   (and the whole log -> OUT_DIR/log.txt)
# A stage that fails or runs out of time leaves what it finished; the next one runs anyway.
#
# The estimates these runs are held against used transformers 4.46.0. A GPU machine that
# cannot reach a package index gets it as wheels in .whl/ (ignored by git), downloaded
# beforehand on a machine that can:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl transformers==4.46.0 tokenizers==0.20.3 huggingface-hub==0.26.2
# and bitsandbytes for stage 4 (about 41 MiB; --platform manylinux_2_24_x86_64):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_24_x86_64 -d .whl bitsandbytes==0.50.2
# This script installs .whl/*.whl, when there are any, into a folder of its own, and
# bitsandbytes into another, which only stage 4 sees.
set -u
python=${PYTHON:-python3}  # the Python with PyTorch (a GPU machine's python3)
out=${1:?usage: bash generator/bench/gpu_check.sh OUT_DIR [SECONDS]}
budget=${2:-500}
start=$SECONDS
mkdir -p "$out/snapshots"
exec > >(tee "$out/log.txt") 2>&1  # the whole log comes back, not only its tail
say() { echo "[gpu_check $(( SECONDS - start )) s] $*"; }
stage() {  # stage PERCENT COMMAND...: run until PERCENT of the budget has passed
    local give=$(( budget * $1 / 100 - (SECONDS - start) )); shift
    if (( give < 15 )); then say "skipped (no time left): $*"; return; fi
    say "start ($give s): $*"
    timeout --signal=TERM --kill-after=15 "$give" "$@"
    say "end, status $?: $1 $2"
}

install() {  # install FOLDER WHEEL...: the wheels into a folder of their own
    local folder=$1; shift
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$folder" "$@"
}
qlora_path=${PYTHONPATH:-}  # stage 4: the machine's own transformers 5, and bitsandbytes
if compgen -G ".whl/bitsandbytes-*.whl" >/dev/null; then
    install /tmp/gpu_check_bnb .whl/bitsandbytes-*.whl &&
        qlora_path=/tmp/gpu_check_bnb${qlora_path:+:$qlora_path}
fi
others=$(compgen -G ".whl/*.whl" | grep -v '/bitsandbytes-' || true)
if [[ -n $others ]]; then
    # shellcheck disable=SC2086  # one wheel a word
    install /tmp/gpu_check_site $others &&
        export PYTHONPATH=/tmp/gpu_check_site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
"$python" - <<'EOF'
import torch
print("torch", torch.__version__, "| cuda", torch.version.cuda, "| cudnn",
      torch.backends.cudnn.version(), "|",
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA GPU")
try:
    import transformers
    print("transformers", transformers.__version__)
except Exception as error:
    print("transformers: not importable:", error)
EOF
before=$(mktemp)
find docs/data -mindepth 2 -name "*.json" | sort >"$before"

stage 12 "$python" -m generator.bench.gpu_cudnn_rnn_reserve "$out/cudnn_rnn_reserve.csv"
stage 20 "$python" -m pytest -q -p no:cacheprovider tests/slow/test_cuda.py
stage 40 "$python" -m generator.bench.gpu_memory_snapshot --results docs/data "$out/snapshots"
stage 75 "$python" -m generator measure \
    --config generator/experiment/suites/optional/validation-cuda.toml --results docs/data
stage 85 env PYTHONPATH="$qlora_path" "$python" -m generator measure --backend cuda \
    --config generator/experiment/suites/optional/qlora-cuda.toml --results docs/data
stage 97 "$python" -m generator measure --backend cuda --results docs/data

find docs/data -mindepth 2 -name "*.json" | sort | comm -13 "$before" - >"$out/new_results.txt"
tar czf "$out/results.tgz" -T "$out/new_results.txt"
say "$(wc -l <"$out/new_results.txt") new result files in $out/results.tgz"
