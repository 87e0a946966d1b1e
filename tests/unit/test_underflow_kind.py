"""The underflow share the claims and the home page quote says what kind of number it is,
from the study's own backend (article/context.parameter_underflow)."""

from __future__ import annotations

from generator.site.pages.article.context import parameter_underflow


def _study(backend: str, device_name: str) -> dict:
    cast = {"zero_fraction": 0.0004, "subnormal_fraction": 0.3616}
    return {"study": {"kind": "underflow", "backend": backend},
            "environment": {"device_name": device_name},
            "data": {"groups": [{"name": "parameters", "casts": {"fp16": cast}}]}}


def test_a_cpu_study_is_measured_on_the_cpu_and_a_gpu_study_on_a_gpu() -> None:
    cpu = parameter_underflow([_study("cpu", "AMD EPYC")])
    assert round(cpu["share"], 4) == 0.362
    assert cpu["kind"].en == "measured on the CPU" and cpu["kind"].zh == "CPU 实测"
    gpu = parameter_underflow([_study("cuda", "NVIDIA H100 80GB HBM3")])
    assert gpu["kind"].en.startswith("measured on a GPU") and "GPU 实测" in gpu["kind"].zh
    assert parameter_underflow([]) is None
