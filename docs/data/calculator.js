window.CALCULATOR_DATA = {
 "categories": [
  "parameters",
  "gradients",
  "optimizer_state",
  "activations",
  "autocast_copies",
  "temporaries"
 ],
 "category_colors": {
  "activations": "#D55E00",
  "autocast_copies": "#CC79A7",
  "gradients": "#E69F00",
  "optimizer_state": "#009E73",
  "parameters": "#0072B2",
  "temporaries": "#8C8C8C"
 },
 "category_words": {
  "activations": {
   "en": "Activations",
   "zh": "激活值"
  },
  "autocast_copies": {
   "en": "Autocast weight copies",
   "zh": "autocast 权重副本"
  },
  "gradients": {
   "en": "Gradients",
   "zh": "梯度"
  },
  "optimizer_state": {
   "en": "Optimizer state",
   "zh": "优化器状态"
  },
  "parameters": {
   "en": "Parameters",
   "zh": "模型参数"
  },
  "temporaries": {
   "en": "Temporaries",
   "zh": "临时张量"
  }
 },
 "constants": {
  "limits": {
   "batch": 1048576,
   "gpu_memory": 100000,
   "seq": 1048576
  },
  "monomials": {
   "1": [
    0,
    0
   ],
   "b": [
    1,
    0
   ],
   "b*s": [
    1,
    1
   ],
   "b*s*s": [
    1,
    2
   ],
   "s": [
    0,
    1
   ],
   "s*s": [
    0,
    2
   ]
  },
  "search": {
   "max_batch": 1048576,
   "max_growth": 16
  }
 },
 "fine_tuning": {
  "count": 14,
  "families": {
   "en": "Llama, Qwen, Mistral, Gemma, Phi, Granite (MoE) and BERT",
   "zh": "Llama、Qwen、Mistral、Gemma、Phi、Granite (MoE) 和 BERT"
  }
 },
 "gpus": [
  {
   "context_bytes": [
    262144000,
    1168113664
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "memory_bytes": 12629508096,
   "name": "NVIDIA GeForce RTX 3060",
   "short_name": "RTX 3060",
   "smi_total_mib": 12288,
   "source": "https://github.com/intelav/cuda-practices/blob/11596c32c94c725a24cc7df70a646e18d71216bf/cppIntegration/README.md",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    262144000,
    1168113664
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "memory_bytes": 8351318016,
   "name": "NVIDIA GeForce RTX 3070",
   "short_name": "RTX 3070",
   "smi_total_mib": 8192,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/RTX3070_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    262144000,
    1168113664
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "memory_bytes": 25327697920,
   "name": "NVIDIA GeForce RTX 3090",
   "short_name": "RTX 3090",
   "smi_total_mib": 24576,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/RTX3090_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    262144000,
    943718400
   ],
   "generation": "Ada (RTX 40, L4, L40, RTX 6000 Ada)",
   "memory_bytes": 25386352640,
   "name": "NVIDIA GeForce RTX 4090",
   "short_name": "RTX 4090",
   "smi_total_mib": 24564,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/RTX4090_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    576716800,
    1342177280
   ],
   "generation": "Blackwell (B200, GB200, RTX 50, RTX PRO 6000)",
   "memory_bytes": 33680457728,
   "name": "NVIDIA GeForce RTX 5090",
   "short_name": "RTX 5090",
   "smi_total_mib": 32607,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/RTX5090_deviceQuery.py",
   "workspace_bytes": 33554432
  },
  {
   "context_bytes": [
    262144000,
    1168113664
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "memory_bytes": 23595909120,
   "name": "NVIDIA A10",
   "short_name": "A10",
   "smi_total_mib": 23028,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/A10_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    262144000,
    943718400
   ],
   "generation": "Ada (RTX 40, L4, L40, RTX 6000 Ada)",
   "memory_bytes": 23570219008,
   "name": "NVIDIA L4",
   "short_name": "L4",
   "smi_total_mib": 23034,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/L4_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    262144000,
    943718400
   ],
   "generation": "Ada (RTX 40, L4, L40, RTX 6000 Ada)",
   "memory_bytes": 47803596800,
   "name": "NVIDIA L40S",
   "short_name": "L40S",
   "smi_total_mib": 46068,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/L40S_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    440401920,
    996147200
   ],
   "generation": "Ampere datacenter (A100, A800, A30)",
   "memory_bytes": 42298834944,
   "name": "NVIDIA A100-SXM4-40GB",
   "short_name": "A100-SXM4-40GB",
   "smi_total_mib": 40960,
   "source": "https://github.com/bottlerocket-os/bottlerocket/pull/3873",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    440401920,
    996147200
   ],
   "generation": "Ampere datacenter (A100, A800, A30)",
   "memory_bytes": 85100068864,
   "name": "NVIDIA A100-SXM4-80GB",
   "short_name": "A100-SXM4-80GB",
   "smi_total_mib": 81920,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/A100SXMx4_deviceQuery.py",
   "workspace_bytes": 8519680
  },
  {
   "context_bytes": [
    471859200,
    1073741824
   ],
   "generation": "Hopper (H100, H200, GH200, H800, H20)",
   "memory_bytes": 85045477376,
   "name": "NVIDIA H100 80GB HBM3",
   "short_name": "H100 80GB HBM3",
   "smi_total_mib": 81559,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/H100SXMx8_deviceQuery.py",
   "workspace_bytes": 33554432
  },
  {
   "context_bytes": [
    471859200,
    1073741824
   ],
   "generation": "Hopper (H100, H200, GH200, H800, H20)",
   "memory_bytes": 150021734400,
   "name": "NVIDIA H200",
   "short_name": "H200",
   "smi_total_mib": 143771,
   "source": "https://github.com/thamada/gls/blob/e20f22d0eec076b6eeed628fdb1312d84a6fb663/gls/H200_deviceQuery.py",
   "workspace_bytes": 33554432
  },
  {
   "context_bytes": [
    576716800,
    1342177280
   ],
   "generation": "Blackwell (B200, GB200, RTX 50, RTX PRO 6000)",
   "memory_bytes": 191503007744,
   "name": "NVIDIA B200",
   "short_name": "B200",
   "smi_total_mib": 183359,
   "source": "https://github.com/mispa-ms/srt-slurm/blob/5805859062ea583ba214f490f8baedfaab50b1af/configs/patches/vllm-container-deps-k3-b200-dcp8-emptycache.sh",
   "workspace_bytes": 33554432
  }
 ],
 "lora_rank": 16,
 "methods": {
  "full": {
   "en": "full fine-tuning",
   "zh": "全参数微调"
  },
  "lora": {
   "en": "LoRA",
   "zh": "LoRA"
  },
  "qlora": {
   "en": "QLoRA (NF4 4-bit weights)",
   "zh": "QLoRA（NF4 4 位权重）"
  }
 },
 "model_groups": [
  {
   "family": "Llama",
   "models": [
    {
     "billions": "1.24",
     "family": "Llama",
     "id": "hf:meta-llama/Llama-3.2-1B",
     "label": "meta-llama/Llama-3.2-1B",
     "parameters": 1235814400,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-accum-2-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt-accum-2-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-meta-llama-Llama-3.2-1B"
    },
    {
     "billions": "3.21",
     "family": "Llama",
     "id": "hf:meta-llama/Llama-3.2-3B",
     "label": "meta-llama/Llama-3.2-3B",
     "parameters": 3212749824,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-meta-llama-Llama-3.2-3B"
    },
    {
     "billions": "8.03",
     "family": "Llama",
     "id": "hf:meta-llama/Llama-3.1-8B",
     "label": "meta-llama/Llama-3.1-8B",
     "parameters": 8030261248,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-meta-llama-Llama-3.1-8B"
    }
   ]
  },
  {
   "family": "Qwen",
   "models": [
    {
     "billions": "0.49",
     "family": "Qwen",
     "id": "hf:Qwen/Qwen2.5-0.5B",
     "label": "Qwen/Qwen2.5-0.5B",
     "parameters": 494032768,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-Qwen-Qwen2.5-0.5B"
    },
    {
     "billions": "1.54",
     "family": "Qwen",
     "id": "hf:Qwen/Qwen2.5-1.5B",
     "label": "Qwen/Qwen2.5-1.5B",
     "parameters": 1543714304,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-Qwen-Qwen2.5-1.5B"
    },
    {
     "billions": "3.09",
     "family": "Qwen",
     "id": "hf:Qwen/Qwen2.5-3B",
     "label": "Qwen/Qwen2.5-3B",
     "parameters": 3085938688,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-Qwen-Qwen2.5-3B"
    },
    {
     "billions": "7.62",
     "family": "Qwen",
     "id": "hf:Qwen/Qwen2.5-7B",
     "label": "Qwen/Qwen2.5-7B",
     "parameters": 7615616512,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-Qwen-Qwen2.5-7B"
    }
   ]
  },
  {
   "family": "Mistral",
   "models": [
    {
     "billions": "7.25",
     "family": "Mistral",
     "id": "hf:mistralai/Mistral-7B-v0.3",
     "label": "mistralai/Mistral-7B-v0.3",
     "parameters": 7248023552,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-mistralai-Mistral-7B-v0.3"
    }
   ]
  },
  {
   "family": "Gemma",
   "models": [
    {
     "billions": "2.61",
     "family": "Gemma",
     "id": "hf:google/gemma-2-2b",
     "label": "google/gemma-2-2b",
     "parameters": 2614341888,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-google-gemma-2-2b-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-google-gemma-2-2b-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-google-gemma-2-2b-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-google-gemma-2-2b-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-google-gemma-2-2b-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-google-gemma-2-2b"
    },
    {
     "billions": "2.51",
     "family": "Gemma",
     "id": "hf:google/gemma-2b",
     "label": "google/gemma-2b",
     "parameters": 2506172416,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-accum-2",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-8bit-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-fused",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-google-gemma-2b-bf16-adamw-ckpt",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "lora",
       "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-accum-2-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-google-gemma-2b-bf16-adamw-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-google-gemma-2b-bf16-adamw-ckpt-lora-r16",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-google-gemma-2b-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-google-gemma-2b-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "qlora",
       "name": "hf-google-gemma-2b-bf16-adamw-ckpt-accum-2-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-google-gemma-2b"
    }
   ]
  },
  {
   "family": "Phi",
   "models": [
    {
     "billions": "2.78",
     "family": "Phi",
     "id": "hf:microsoft/phi-2",
     "label": "microsoft/phi-2",
     "parameters": 2779683840,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-microsoft-phi-2-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-microsoft-phi-2-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-microsoft-phi-2-amp-bf16-adamw-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-microsoft-phi-2-amp-bf16-adamw-ckpt-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-microsoft-phi-2-bf16-adamw-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-microsoft-phi-2-bf16-adamw-ckpt-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-microsoft-phi-2"
    }
   ]
  },
  {
   "family": "Granite (MoE)",
   "models": [
    {
     "billions": "1.33",
     "family": "Granite (MoE)",
     "id": "hf:ibm-granite/granite-3.0-1b-a400m-instruct",
     "label": "ibm-granite/granite-3.0-1b-a400m-instruct",
     "parameters": 1334628352,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-lora-r16-lora-on-q_proj_v_proj",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-ckpt-lora-r16-lora-on-q_proj_v_proj",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-bf16-adamw-lora-r16-lora-on-q_proj_v_proj-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-bf16-adamw-ckpt-lora-r16-lora-on-q_proj_v_proj-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-ibm-granite-granite-3.0-1b-a400m-instruct"
    }
   ]
  },
  {
   "family": "BERT",
   "models": [
    {
     "billions": "0.11",
     "family": "BERT",
     "id": "hf:bert-base-uncased",
     "label": "bert-base-uncased",
     "parameters": 109483778,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-bert-base-uncased-fp32-adamw-task-sequence-classification",
       "precision": "fp32"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-bert-base-uncased-amp-fp16-adamw-task-sequence-classification",
       "precision": "amp-fp16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-8bit-ckpt-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-fused-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-task-sequence-classification-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-task-sequence-classification-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "lora",
       "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-bert-base-uncased-bf16-adamw-task-sequence-classification-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-bert-base-uncased-bf16-adamw-ckpt-task-sequence-classification-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "qlora",
       "name": "hf-bert-base-uncased-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-bert-base-uncased"
    },
    {
     "billions": "0.34",
     "family": "BERT",
     "id": "hf:bert-large-uncased",
     "label": "bert-large-uncased",
     "parameters": 335143938,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-bert-large-uncased-fp32-adamw-task-sequence-classification",
       "precision": "fp32"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-bert-large-uncased-amp-fp16-adamw-task-sequence-classification",
       "precision": "amp-fp16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "full",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + 8-bit AdamW",
        "zh": "激活检查点 + 8 位 AdamW"
       },
       "levers": "ckpt+adamw-8bit",
       "method": "full",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-8bit-ckpt-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + fused optimizer",
        "zh": "激活检查点 + fused 优化器实现"
       },
       "levers": "ckpt+fused",
       "method": "full",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-fused-task-sequence-classification",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "lora",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-task-sequence-classification-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "lora",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-task-sequence-classification-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "lora",
       "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "qlora",
       "name": "hf-bert-large-uncased-bf16-adamw-task-sequence-classification-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "qlora",
       "name": "hf-bert-large-uncased-bf16-adamw-ckpt-task-sequence-classification-lora-r16-nf4",
       "precision": "bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
        "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
       },
       "levers": "ckpt+accum-2",
       "method": "qlora",
       "name": "hf-bert-large-uncased-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16-nf4",
       "precision": "bf16"
      }
     ],
     "slug": "hf-bert-large-uncased"
    },
    {
     "billions": "0.11",
     "family": "BERT",
     "id": "bert-base",
     "label": "bert-base",
     "parameters": 109514298,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "bert-base-fp32-adamw-none",
       "precision": "fp32"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "bert-base-fp32-adamw-ckpt",
       "precision": "fp32"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "bert-base-amp-fp16-adamw-none",
       "precision": "amp-fp16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "bert-base-amp-fp16-adamw-ckpt",
       "precision": "amp-fp16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "bert-base-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "bert-base-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      }
     ],
     "slug": "bert-base"
    }
   ]
  },
  {
   "family": "GPT-2",
   "models": [
    {
     "billions": "0.12",
     "family": "GPT-2",
     "id": "gpt2-small",
     "label": "gpt2-small",
     "parameters": 124439808,
     "settings": [
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "gpt2-small-fp32-adamw-none",
       "precision": "fp32"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "gpt2-small-fp32-adamw-ckpt",
       "precision": "fp32"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "gpt2-small-amp-fp16-adamw-none",
       "precision": "amp-fp16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "gpt2-small-amp-fp16-adamw-ckpt",
       "precision": "amp-fp16"
      },
      {
       "lever_words": {
        "en": "none",
        "zh": "无"
       },
       "levers": "none",
       "method": "full",
       "name": "gpt2-small-amp-bf16-adamw-none",
       "precision": "amp-bf16"
      },
      {
       "lever_words": {
        "en": "activation checkpointing",
        "zh": "激活检查点"
       },
       "levers": "ckpt",
       "method": "full",
       "name": "gpt2-small-amp-bf16-adamw-ckpt",
       "precision": "amp-bf16"
      }
     ],
     "slug": "gpt2-small"
    }
   ]
  }
 ],
 "models": [
  {
   "billions": "1.24",
   "family": "Llama",
   "id": "hf:meta-llama/Llama-3.2-1B",
   "label": "meta-llama/Llama-3.2-1B",
   "parameters": 1235814400,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-1B-amp-bf16-adamw-ckpt-accum-2-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.2-1B-bf16-adamw-ckpt-accum-2-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-meta-llama-Llama-3.2-1B"
  },
  {
   "billions": "3.21",
   "family": "Llama",
   "id": "hf:meta-llama/Llama-3.2-3B",
   "label": "meta-llama/Llama-3.2-3B",
   "parameters": 3212749824,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-3B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.2-3B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-meta-llama-Llama-3.2-3B"
  },
  {
   "billions": "8.03",
   "family": "Llama",
   "id": "hf:meta-llama/Llama-3.1-8B",
   "label": "meta-llama/Llama-3.1-8B",
   "parameters": 8030261248,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.1-8B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-meta-llama-Llama-3.1-8B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-meta-llama-Llama-3.1-8B"
  },
  {
   "billions": "0.49",
   "family": "Qwen",
   "id": "hf:Qwen/Qwen2.5-0.5B",
   "label": "Qwen/Qwen2.5-0.5B",
   "parameters": 494032768,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-0.5B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-0.5B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-Qwen-Qwen2.5-0.5B"
  },
  {
   "billions": "1.54",
   "family": "Qwen",
   "id": "hf:Qwen/Qwen2.5-1.5B",
   "label": "Qwen/Qwen2.5-1.5B",
   "parameters": 1543714304,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-1.5B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-1.5B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-Qwen-Qwen2.5-1.5B"
  },
  {
   "billions": "3.09",
   "family": "Qwen",
   "id": "hf:Qwen/Qwen2.5-3B",
   "label": "Qwen/Qwen2.5-3B",
   "parameters": 3085938688,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-3B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-3B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-Qwen-Qwen2.5-3B"
  },
  {
   "billions": "7.62",
   "family": "Qwen",
   "id": "hf:Qwen/Qwen2.5-7B",
   "label": "Qwen/Qwen2.5-7B",
   "parameters": 7615616512,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-7B-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-Qwen-Qwen2.5-7B-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-Qwen-Qwen2.5-7B"
  },
  {
   "billions": "7.25",
   "family": "Mistral",
   "id": "hf:mistralai/Mistral-7B-v0.3",
   "label": "mistralai/Mistral-7B-v0.3",
   "parameters": 7248023552,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-mistralai-Mistral-7B-v0.3-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-mistralai-Mistral-7B-v0.3-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-mistralai-Mistral-7B-v0.3"
  },
  {
   "billions": "2.61",
   "family": "Gemma",
   "id": "hf:google/gemma-2-2b",
   "label": "google/gemma-2-2b",
   "parameters": 2614341888,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-google-gemma-2-2b-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-google-gemma-2-2b-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-google-gemma-2-2b-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-google-gemma-2-2b-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-google-gemma-2-2b-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-google-gemma-2-2b-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-google-gemma-2-2b"
  },
  {
   "billions": "2.51",
   "family": "Gemma",
   "id": "hf:google/gemma-2b",
   "label": "google/gemma-2b",
   "parameters": 2506172416,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-accum-2",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-8bit-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-fused",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-google-gemma-2b-bf16-adamw-ckpt",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "lora",
     "name": "hf-google-gemma-2b-amp-bf16-adamw-ckpt-accum-2-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-google-gemma-2b-bf16-adamw-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-google-gemma-2b-bf16-adamw-ckpt-lora-r16",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-google-gemma-2b-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-google-gemma-2b-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "qlora",
     "name": "hf-google-gemma-2b-bf16-adamw-ckpt-accum-2-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-google-gemma-2b"
  },
  {
   "billions": "2.78",
   "family": "Phi",
   "id": "hf:microsoft/phi-2",
   "label": "microsoft/phi-2",
   "parameters": 2779683840,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-microsoft-phi-2-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-microsoft-phi-2-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-microsoft-phi-2-amp-bf16-adamw-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-microsoft-phi-2-amp-bf16-adamw-ckpt-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-microsoft-phi-2-bf16-adamw-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-microsoft-phi-2-bf16-adamw-ckpt-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-microsoft-phi-2"
  },
  {
   "billions": "1.33",
   "family": "Granite (MoE)",
   "id": "hf:ibm-granite/granite-3.0-1b-a400m-instruct",
   "label": "ibm-granite/granite-3.0-1b-a400m-instruct",
   "parameters": 1334628352,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-lora-r16-lora-on-q_proj_v_proj",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-amp-bf16-adamw-ckpt-lora-r16-lora-on-q_proj_v_proj",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-bf16-adamw-lora-r16-lora-on-q_proj_v_proj-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-ibm-granite-granite-3.0-1b-a400m-instruct-bf16-adamw-ckpt-lora-r16-lora-on-q_proj_v_proj-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-ibm-granite-granite-3.0-1b-a400m-instruct"
  },
  {
   "billions": "0.11",
   "family": "BERT",
   "id": "hf:bert-base-uncased",
   "label": "bert-base-uncased",
   "parameters": 109483778,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-bert-base-uncased-fp32-adamw-task-sequence-classification",
     "precision": "fp32"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-bert-base-uncased-amp-fp16-adamw-task-sequence-classification",
     "precision": "amp-fp16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-8bit-ckpt-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-fused-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-task-sequence-classification-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-task-sequence-classification-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "lora",
     "name": "hf-bert-base-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-bert-base-uncased-bf16-adamw-task-sequence-classification-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-bert-base-uncased-bf16-adamw-ckpt-task-sequence-classification-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "qlora",
     "name": "hf-bert-base-uncased-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-bert-base-uncased"
  },
  {
   "billions": "0.34",
   "family": "BERT",
   "id": "hf:bert-large-uncased",
   "label": "bert-large-uncased",
   "parameters": 335143938,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-bert-large-uncased-fp32-adamw-task-sequence-classification",
     "precision": "fp32"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-bert-large-uncased-amp-fp16-adamw-task-sequence-classification",
     "precision": "amp-fp16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "full",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + 8-bit AdamW",
      "zh": "激活检查点 + 8 位 AdamW"
     },
     "levers": "ckpt+adamw-8bit",
     "method": "full",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-8bit-ckpt-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + fused optimizer",
      "zh": "激活检查点 + fused 优化器实现"
     },
     "levers": "ckpt+fused",
     "method": "full",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-fused-task-sequence-classification",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "lora",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-task-sequence-classification-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "lora",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-task-sequence-classification-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "lora",
     "name": "hf-bert-large-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "qlora",
     "name": "hf-bert-large-uncased-bf16-adamw-task-sequence-classification-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "qlora",
     "name": "hf-bert-large-uncased-bf16-adamw-ckpt-task-sequence-classification-lora-r16-nf4",
     "precision": "bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing + gradient accumulation (2 or more micro-batches)",
      "zh": "激活检查点 + 梯度累积（2 个及以上微批次）"
     },
     "levers": "ckpt+accum-2",
     "method": "qlora",
     "name": "hf-bert-large-uncased-bf16-adamw-ckpt-accum-2-task-sequence-classification-lora-r16-nf4",
     "precision": "bf16"
    }
   ],
   "slug": "hf-bert-large-uncased"
  },
  {
   "billions": "0.11",
   "family": "BERT",
   "id": "bert-base",
   "label": "bert-base",
   "parameters": 109514298,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "bert-base-fp32-adamw-none",
     "precision": "fp32"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "bert-base-fp32-adamw-ckpt",
     "precision": "fp32"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "bert-base-amp-fp16-adamw-none",
     "precision": "amp-fp16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "bert-base-amp-fp16-adamw-ckpt",
     "precision": "amp-fp16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "bert-base-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "bert-base-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    }
   ],
   "slug": "bert-base"
  },
  {
   "billions": "0.12",
   "family": "GPT-2",
   "id": "gpt2-small",
   "label": "gpt2-small",
   "parameters": 124439808,
   "settings": [
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "gpt2-small-fp32-adamw-none",
     "precision": "fp32"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "gpt2-small-fp32-adamw-ckpt",
     "precision": "fp32"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "gpt2-small-amp-fp16-adamw-none",
     "precision": "amp-fp16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "gpt2-small-amp-fp16-adamw-ckpt",
     "precision": "amp-fp16"
    },
    {
     "lever_words": {
      "en": "none",
      "zh": "无"
     },
     "levers": "none",
     "method": "full",
     "name": "gpt2-small-amp-bf16-adamw-none",
     "precision": "amp-bf16"
    },
    {
     "lever_words": {
      "en": "activation checkpointing",
      "zh": "激活检查点"
     },
     "levers": "ckpt",
     "method": "full",
     "name": "gpt2-small-amp-bf16-adamw-ckpt",
     "precision": "amp-bf16"
    }
   ],
   "slug": "gpt2-small"
  }
 ],
 "points_per_fit": "9",
 "precisions": {
  "full": {
   "amp-bf16": {
    "en": "AMP bf16: FP32 weights, bf16 compute",
    "zh": "AMP bf16：FP32 权重，bf16 计算"
   },
   "amp-fp16": {
    "en": "AMP fp16: FP32 weights, fp16 compute",
    "zh": "AMP fp16：FP32 权重，fp16 计算"
   },
   "bf16": {
    "en": "bf16 weights, gradients and AdamW state",
    "zh": "bf16 权重、梯度和 AdamW 状态"
   },
   "fp32": {
    "en": "FP32",
    "zh": "FP32"
   }
  },
  "lora": {
   "amp-bf16": {
    "en": "AMP bf16: FP32 frozen weights, bf16 compute",
    "zh": "AMP bf16：FP32 冻结权重，bf16 计算"
   },
   "bf16": {
    "en": "bf16 weights (adapters in FP32)",
    "zh": "bf16 权重（适配器为 FP32）"
   }
  },
  "qlora": {
   "bf16": {
    "en": "NF4 weights, bf16 compute (adapters in FP32)",
    "zh": "NF4 权重，bf16 计算（适配器为 FP32）"
   }
  }
 },
 "schema_version": 5,
 "start": {
  "batch": 1,
  "gpu": "NVIDIA H100 80GB HBM3",
  "levers": "ckpt",
  "method": "lora",
  "model": "hf:meta-llama/Llama-3.1-8B",
  "precision": "bf16",
  "seq": 2048
 },
 "upper_bound": {
  "en": "The reserved peak was found without memory pressure, so it is an upper bound: before it raises out of memory, PyTorch's caching allocator frees the blocks it keeps cached and tries again.",
  "zh": "已预留峰值是在显存宽裕时得到的，所以是上限：PyTorch 的缓存分配器在报显存不足（out of memory）之前，会先释放它缓存着的空闲块再试一次。"
 },
 "verdict_words": {
  "en": {
   "maybe": "may fit",
   "no": "does not fit",
   "only just": "only just",
   "yes": "fits"
  },
  "zh": {
   "maybe": "可能放得下",
   "no": "放不下",
   "only just": "勉强",
   "yes": "放得下"
  }
 }
};
