#!/usr/bin/env bash
# Installs what ringrl needs on Debian 12 (as root): the Debian packages (Open MPI among them, for
# `mpirun ... ringrl tune|train`, docs/cluster.md; OSMesa, FFmpeg and giflib for the maze videos
# of `ringrl env render --policy`), then LibTorch from
# PyPI's torch wheel (CUDA 13 build; runs on the CPU where no GPU is present) and tensorboard.
# The torch wheel is required: without it setup stops with one line (Debian's libtorch-dev,
# LibTorch 1.13, is too old for the learner; a LibTorch of your own is named with
# cmake -DRINGRL_TORCH_SOURCE=system -DTorch_DIR=...).
# Safe to run again: it installs only what is missing.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config python3 python3-pip python3-dev
  libboost-dev libtbb-dev libspdlog-dev libfmt-dev libgtest-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libeigen3-dev libpng-dev
  libmujoco-dev libqhull-dev libgl-dev libopengl-dev
  libosmesa6-dev libavformat-dev libavcodec-dev libswscale-dev libgif-dev
  libopenblas0-openmp
  libopenmpi-dev openmpi-bin
)
TORCH_PIP_SPEC="${RINGRL_TORCH_PIP_SPEC:-torch==2.15.0}"

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

PY=${PYTHON:-python3}
pip_install() {
  # Debian's own python refuses system-wide pip installs without this flag.
  "$PY" -m pip install -q "$@" 2>/dev/null || "$PY" -m pip install -q --break-system-packages "$@"
}
if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "setup: installing $TORCH_PIP_SPEC from PyPI (a few minutes the first time)"
  if ! pip_install "$TORCH_PIP_SPEC"; then
    echo "setup: $TORCH_PIP_SPEC did not install from PyPI with $PY; the learner needs it (see the top of this script)" >&2
    exit 1
  fi
fi
if ! "$PY" -c "import tensorboard" 2>/dev/null; then
  pip_install tensorboard || echo "setup: tensorboard did not install; the event-file read-back test will be skipped"
fi
# The Python package (`pip install .`, docs/python.md): its build backend, bindings and tests.
if ! "$PY" -c "import nanobind, scikit_build_core, gymnasium, pytest, numpy" 2>/dev/null; then
  pip_install nanobind scikit-build-core "gymnasium>=1.0" pytest numpy
fi
