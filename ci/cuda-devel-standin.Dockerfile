# A stand-in for the nvidia/cuda devel image where that image cannot be pulled: a Debian base
# (made with debootstrap by `nox -s docker-cuda`) with g++, binutils and the nvcc of the pinned
# CUDA release from NVIDIA's wheels (ci/nvcc-wheel.sh reads CUDA_WHEELS from ci/versions.env),
# laid out as /usr/local/cuda. It serves only the kernels stage of Dockerfile.cuda.
#   docker build -f ci/cuda-devel-standin.Dockerfile --build-arg BASE_IMAGE=IMAGE \
#     --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t IMAGE ci
ARG BASE_IMAGE=torchlight-standin/debian:bookworm

FROM ${BASE_IMAGE} AS wheels
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/pip
COPY nvcc-wheel.sh versions.env /tmp/ci/
RUN --mount=type=secret,id=ca --mount=type=cache,id=torchlight-pip,target=/root/.cache/pip \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi; \
    PYTHON=/opt/pip/bin/python bash /tmp/ci/nvcc-wheel.sh /opt/cuda

FROM ${BASE_IMAGE}
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends g++ binutils \
    && rm -rf /var/lib/apt/lists/*
COPY --from=wheels /opt/cuda /usr/local/cuda
ENV CUDA_HOME=/usr/local/cuda \
    PATH=/usr/local/cuda/bin:${PATH}
