window.CALCULATOR_DATA = {
 "cards": [
  {
   "context_bytes": [
    262144000,
    838860800
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "name": "NVIDIA GeForce RTX 3070",
   "size_gb": 8,
   "source": "https://github.com/ace-step/ACE-Step/issues/344",
   "total_bytes": 8589934592
  },
  {
   "context_bytes": [
    262144000,
    838860800
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "name": "NVIDIA GeForce RTX 3060",
   "size_gb": 12,
   "source": "https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/790",
   "total_bytes": 12884901888
  },
  {
   "context_bytes": [
    262144000,
    838860800
   ],
   "generation": "Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)",
   "name": "NVIDIA RTX A4000",
   "size_gb": 16,
   "source": "https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/791",
   "total_bytes": 17171480576
  },
  {
   "context_bytes": [
    262144000,
    943718400
   ],
   "generation": "Ada (RTX 40, L4, L40, RTX 6000 Ada)",
   "name": "NVIDIA GeForce RTX 4090",
   "size_gb": 24,
   "source": "https://github.com/RLinf/RLinf/issues/255",
   "total_bytes": 25757220864
  },
  {
   "context_bytes": [
    440401920,
    996147200
   ],
   "generation": "Ampere datacenter (A100, A800, A30)",
   "name": "NVIDIA A100-SXM4-40GB",
   "size_gb": 40,
   "source": "https://github.com/modal-labs/modal-client/pull/2797",
   "total_bytes": 42949672960
  },
  {
   "context_bytes": [
    262144000,
    943718400
   ],
   "generation": "Ada (RTX 40, L4, L40, RTX 6000 Ada)",
   "name": "NVIDIA L40S",
   "size_gb": 48,
   "source": "https://github.com/modal-labs/modal-client/pull/2797",
   "total_bytes": 48305799168
  },
  {
   "context_bytes": [
    471859200,
    1073741824
   ],
   "generation": "Hopper (H100, H200, GH200, H800, H20)",
   "name": "NVIDIA H100 80GB HBM3",
   "size_gb": 80,
   "source": "https://github.com/NVIDIA/nccl/issues/1264",
   "total_bytes": 85520809984
  },
  {
   "context_bytes": [
    471859200,
    1073741824
   ],
   "generation": "Hopper (H100, H200, GH200, H800, H20)",
   "name": "NVIDIA H200",
   "size_gb": 141,
   "source": "nvidia-smi on NVIDIA H200, driver 570.158.01",
   "total_bytes": 150754820096
  }
 ],
 "fits": [
  {
   "allocated": {
    "fixed": 1399982194.97882,
    "floor": 0.0,
    "max_rel_residual": 0.00020248858244643902,
    "per_token": 990491.3895866162,
    "per_token_sq": 1296.8093596330848,
    "spread": 0.0004923706381283102
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": null,
   "levers": "none",
   "model": "bert-base",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 4789216768,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-fp32-adamw-estimate-trace",
     "reserved": 4955570176,
     "seq": 512
    },
    {
     "allocated": 3598030848,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-fp32-adamw-estimate-trace",
     "reserved": 3755999232,
     "seq": 64
    },
    {
     "allocated": 23066285568,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-fp32-adamw-estimate-trace",
     "reserved": 24201134080,
     "seq": 256
    },
    {
     "allocated": 39290376704,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-fp32-adamw-estimate-trace",
     "reserved": 42513465344,
     "seq": 128
    },
    {
     "allocated": 218234854912,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-fp32-adamw-estimate-trace",
     "reserved": 233486417920,
     "seq": 512
    },
    {
     "allocated": 142132875264,
     "batch": 2048,
     "floor": false,
     "key": "bert-base-b2048-s64-fp32-adamw-estimate-trace",
     "reserved": 157284302848,
     "seq": 64
    }
   ],
   "precision": "fp32",
   "range": {
    "seq": [
     64,
     512
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "bert-base-fp32-adamw-none",
   "replay_problem": null,
   "reserved": {
    "fixed": 1344032412.4429536,
    "floor": 0.0,
    "max_rel_residual": 0.020181824996044102,
    "per_token": 1093962.8459782288,
    "per_token_sq": 1292.7144650836237,
    "spread": 0.025848505354684262
   }
  },
  {
   "allocated": {
    "fixed": 1395389438.6424804,
    "floor": 2269642752,
    "max_rel_residual": 0.0008507317919012501,
    "per_token": 419118.79986242385,
    "per_token_sq": 0.2057237037830584,
    "spread": 0.015675159106533915
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": {
    "en": "checkpointing",
    "zh": "激活检查点"
   },
   "levers": "ckpt",
   "model": "bert-base",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 2269642752,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3187671040,
     "seq": 512
    },
    {
     "allocated": 2267713536,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3175088128,
     "seq": 64
    },
    {
     "allocated": 8264586752,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-fp32-adamw-estimate-ckpt-trace",
     "reserved": 9992929280,
     "seq": 256
    },
    {
     "allocated": 15124107776,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-fp32-adamw-estimate-ckpt-trace",
     "reserved": 19253952512,
     "seq": 128
    },
    {
     "allocated": 56343109120,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 65959624704,
     "seq": 512
    },
    {
     "allocated": 56344238080,
     "batch": 2048,
     "floor": false,
     "key": "bert-base-b2048-s64-fp32-adamw-estimate-ckpt-trace",
     "reserved": 59215183872,
     "seq": 64
    }
   ],
   "precision": "fp32",
   "range": {
    "seq": [
     64,
     512
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "bert-base-fp32-adamw-ckpt",
   "replay_problem": null,
   "reserved": {
    "fixed": 2224987249.2137547,
    "floor": 0.0,
    "max_rel_residual": 0.09119920113282612,
    "per_token": 458182.0330285851,
    "per_token_sq": 61.8246356873029,
    "spread": 0.16711357122211132
   }
  },
  {
   "allocated": {
    "fixed": 1661604911.6072667,
    "floor": 0.0,
    "max_rel_residual": 0.0028039503867376605,
    "per_token": 704599.0201245362,
    "per_token_sq": 1001.5909155167008,
    "spread": 0.00773923932600767
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": null,
   "levers": "none",
   "model": "bert-base",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 4143250432,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 4305453056,
     "seq": 512
    },
    {
     "allocated": 3243353600,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-amp-fp16-adamw-estimate-trace",
     "reserved": 3399483392,
     "seq": 64
    },
    {
     "allocated": 17401596928,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-fp16-adamw-estimate-trace",
     "reserved": 19593691136,
     "seq": 256
    },
    {
     "allocated": 28932935680,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 34233909248,
     "seq": 128
    },
    {
     "allocated": 161550099456,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 187183398912,
     "seq": 512
    },
    {
     "allocated": 102361650688,
     "batch": 2048,
     "floor": false,
     "key": "bert-base-b2048-s64-amp-fp16-adamw-estimate-trace",
     "reserved": 126584094720,
     "seq": 64
    }
   ],
   "precision": "amp-fp16",
   "range": {
    "seq": [
     64,
     512
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "bert-base-amp-fp16-adamw-none",
   "replay_problem": null,
   "reserved": {
    "fixed": 1452162311.65609,
    "floor": 0.0,
    "max_rel_residual": 0.02452573503492097,
    "per_token": 877147.9638285448,
    "per_token_sq": 1013.4902625404952,
    "spread": 0.043248258001881805
   }
  },
  {
   "allocated": {
    "fixed": 1438893740.7625763,
    "floor": 2301093376,
    "max_rel_residual": 0.0013689293586552586,
    "per_token": 353607.2707892537,
    "per_token_sq": 0.01133863216261536,
    "spread": 0.00133123446029846
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": {
    "en": "checkpointing",
    "zh": "激活检查点"
   },
   "levers": "ckpt",
   "model": "bert-base",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 2297947648,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3166699520,
     "seq": 512
    },
    {
     "allocated": 2301093376,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3189768192,
     "seq": 64
    },
    {
     "allocated": 7232553984,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 10169090048,
     "seq": 256
    },
    {
     "allocated": 13025523712,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 18826133504,
     "seq": 128
    },
    {
     "allocated": 47787609088,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 66565701632,
     "seq": 512
    },
    {
     "allocated": 47787867648,
     "batch": 2048,
     "floor": false,
     "key": "bert-base-b2048-s64-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 57103351808,
     "seq": 64
    }
   ],
   "precision": "amp-fp16",
   "range": {
    "seq": [
     64,
     512
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "bert-base-amp-fp16-adamw-ckpt",
   "replay_problem": null,
   "reserved": {
    "fixed": 2238738016.546221,
    "floor": 0.0,
    "max_rel_residual": 0.08800270149958633,
    "per_token": 442174.8818883091,
    "per_token_sq": 105.25187268109165,
    "spread": 0.19818916236299275
   }
  },
  {
   "allocated": {
    "fixed": 1658919268.8580902,
    "floor": 0.0,
    "max_rel_residual": 0.002462129153318928,
    "per_token": 704517.3325028402,
    "per_token_sq": 1002.3756257672409,
    "spread": 0.0067968652000724265
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": null,
   "levers": "none",
   "model": "bert-base",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 4142638080,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 4305453056,
     "seq": 512
    },
    {
     "allocated": 3239679488,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-amp-bf16-adamw-estimate-trace",
     "reserved": 3391094784,
     "seq": 64
    },
    {
     "allocated": 17401592832,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-bf16-adamw-estimate-trace",
     "reserved": 19593691136,
     "seq": 256
    },
    {
     "allocated": 28932931584,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 34233909248,
     "seq": 128
    },
    {
     "allocated": 161550095360,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 187183398912,
     "seq": 512
    },
    {
     "allocated": 102361646592,
     "batch": 2048,
     "floor": false,
     "key": "bert-base-b2048-s64-amp-bf16-adamw-estimate-trace",
     "reserved": 126584094720,
     "seq": 64
    }
   ],
   "precision": "amp-bf16",
   "range": {
    "seq": [
     64,
     512
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "bert-base-amp-bf16-adamw-none",
   "replay_problem": null,
   "reserved": {
    "fixed": 1446576340.0610545,
    "floor": 0.0,
    "max_rel_residual": 0.02449001356528602,
    "per_token": 876800.5224999215,
    "per_token_sq": 1016.0123817956202,
    "spread": 0.041348708434689276
   }
  },
  {
   "allocated": {
    "fixed": 1438792975.3814433,
    "floor": 2303008768,
    "max_rel_residual": 0.00015030946851817098,
    "per_token": 353595.69905403286,
    "per_token_sq": 0.03677098101428631,
    "spread": 0.0034815923507138975
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": {
    "en": "checkpointing",
    "zh": "激活检查点"
   },
   "levers": "ckpt",
   "model": "bert-base",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 2302662656,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3166699520,
     "seq": 512
    },
    {
     "allocated": 2303008768,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3189768192,
     "seq": 64
    },
    {
     "allocated": 7232549888,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 10169090048,
     "seq": 256
    },
    {
     "allocated": 13024471040,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 18826133504,
     "seq": 128
    },
    {
     "allocated": 47787604992,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 66565701632,
     "seq": 512
    },
    {
     "allocated": 47787863552,
     "batch": 2048,
     "floor": false,
     "key": "bert-base-b2048-s64-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 57103351808,
     "seq": 64
    }
   ],
   "precision": "amp-bf16",
   "range": {
    "seq": [
     64,
     512
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "bert-base-amp-bf16-adamw-ckpt",
   "replay_problem": null,
   "reserved": {
    "fixed": 2238738016.546221,
    "floor": 0.0,
    "max_rel_residual": 0.08800270149958633,
    "per_token": 442174.8818883091,
    "per_token_sq": 105.25187268109165,
    "spread": 0.19818916236299275
   }
  },
  {
   "allocated": {
    "fixed": 1589798419.945315,
    "floor": 0.0,
    "max_rel_residual": 0.0003698095780887613,
    "per_token": 1657802.6893685944,
    "per_token_sq": 1297.9596652686043,
    "spread": 0.0010837483474969588
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": null,
   "levers": "none",
   "model": "gpt2-small",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 7704147968,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-fp32-adamw-estimate-trace",
     "reserved": 7983857664,
     "seq": 1024
    },
    {
     "allocated": 5326443520,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-fp32-adamw-estimate-trace",
     "reserved": 6002049024,
     "seq": 128
    },
    {
     "allocated": 39647099904,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-fp32-adamw-estimate-trace",
     "reserved": 42024828928,
     "seq": 512
    },
    {
     "allocated": 66805718528,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-fp32-adamw-estimate-trace",
     "reserved": 72550973440,
     "seq": 256
    },
    {
     "allocated": 393159276032,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-fp32-adamw-estimate-trace",
     "reserved": 419042426880,
     "seq": 1024
    },
    {
     "allocated": 240584514560,
     "batch": 1024,
     "floor": false,
     "key": "gpt2-small-b1024-s128-fp32-adamw-estimate-trace",
     "reserved": 267074404352,
     "seq": 128
    }
   ],
   "precision": "fp32",
   "range": {
    "seq": [
     128,
     1024
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "gpt2-small-fp32-adamw-none",
   "replay_problem": null,
   "reserved": {
    "fixed": 1763855478.359511,
    "floor": 0.0,
    "max_rel_residual": 0.023269427221947855,
    "per_token": 1867510.3158869012,
    "per_token_sq": 1212.5773878583313,
    "spread": 0.06828956510586864
   }
  },
  {
   "allocated": {
    "fixed": 1564726671.5317302,
    "floor": 0.0,
    "max_rel_residual": 0.001312529980505493,
    "per_token": 644148.671855557,
    "per_token_sq": 2.549066718804758,
    "spread": 0.0024677366098043952
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": {
    "en": "checkpointing",
    "zh": "激活检查点"
   },
   "levers": "ckpt",
   "model": "gpt2-small",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 2888431616,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3900702720,
     "seq": 1024
    },
    {
     "allocated": 2884493312,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-fp32-adamw-estimate-ckpt-trace",
     "reserved": 4297064448,
     "seq": 128
    },
    {
     "allocated": 12155796480,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 15934160896,
     "seq": 512
    },
    {
     "allocated": 22707765248,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-fp32-adamw-estimate-ckpt-trace",
     "reserved": 30039605248,
     "seq": 256
    },
    {
     "allocated": 86298269696,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-fp32-adamw-estimate-ckpt-trace",
     "reserved": 134630866944,
     "seq": 1024
    },
    {
     "allocated": 85938467840,
     "batch": 1024,
     "floor": false,
     "key": "gpt2-small-b1024-s128-fp32-adamw-estimate-ckpt-trace",
     "reserved": 118973530112,
     "seq": 128
    }
   ],
   "precision": "fp32",
   "range": {
    "seq": [
     128,
     1024
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "gpt2-small-fp32-adamw-ckpt",
   "replay_problem": null,
   "reserved": {
    "fixed": 2179454231.456534,
    "floor": 0.0,
    "max_rel_residual": 0.0792870534084306,
    "per_token": 856510.4032399599,
    "per_token_sq": 86.8809979247431,
    "spread": 0.2898275452291978
   }
  },
  {
   "allocated": {
    "fixed": 1838755598.763637,
    "floor": 0.0,
    "max_rel_residual": 0.0005717608470378812,
    "per_token": 1296939.280164754,
    "per_token_sq": 1012.4085931782331,
    "spread": 0.0018471608476314533
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": null,
   "levers": "none",
   "model": "gpt2-small",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 6621848064,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-fp16-adamw-estimate-trace",
     "reserved": 7107248128,
     "seq": 1024
    },
    {
     "allocated": 4758194176,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 5060427776,
     "seq": 128
    },
    {
     "allocated": 31580546048,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 37331402752,
     "seq": 512
    },
    {
     "allocated": 52851300352,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-fp16-adamw-estimate-trace",
     "reserved": 65525514240,
     "seq": 256
    },
    {
     "allocated": 307560254464,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-fp16-adamw-estimate-trace",
     "reserved": 362505306112,
     "seq": 1024
    },
    {
     "allocated": 188808443904,
     "batch": 1024,
     "floor": false,
     "key": "gpt2-small-b1024-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 216048599040,
     "seq": 128
    }
   ],
   "precision": "amp-fp16",
   "range": {
    "seq": [
     128,
     1024
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "gpt2-small-amp-fp16-adamw-none",
   "replay_problem": null,
   "reserved": {
    "fixed": 1539223776.170195,
    "floor": 0.0,
    "max_rel_residual": 0.04780232354579454,
    "per_token": 1554238.792920594,
    "per_token_sq": 1183.1190425399222,
    "spread": 0.09879802674877572
   }
  },
  {
   "allocated": {
    "fixed": 1815735305.7964933,
    "floor": 0.0,
    "max_rel_residual": 0.001719198999827996,
    "per_token": 542239.410753936,
    "per_token_sq": 2.4342300833640325,
    "spread": 0.0035002903690680683
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": {
    "en": "checkpointing",
    "zh": "激活检查点"
   },
   "levers": "ckpt",
   "model": "gpt2-small",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 2929707520,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3701473280,
     "seq": 1024
    },
    {
     "allocated": 2927016960,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3875536896,
     "seq": 128
    },
    {
     "allocated": 10738667520,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 14256439296,
     "seq": 512
    },
    {
     "allocated": 19620747264,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 33030144000,
     "seq": 256
    },
    {
     "allocated": 73176715776,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 118812049408,
     "seq": 1024
    },
    {
     "allocated": 72818342400,
     "batch": 1024,
     "floor": false,
     "key": "gpt2-small-b1024-s128-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 104589164544,
     "seq": 128
    }
   ],
   "precision": "amp-fp16",
   "range": {
    "seq": [
     128,
     1024
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "gpt2-small-amp-fp16-adamw-ckpt",
   "replay_problem": null,
   "reserved": {
    "fixed": 2046003193.4251018,
    "floor": 0.0,
    "max_rel_residual": 0.12096569160931667,
    "per_token": 813906.2909303119,
    "per_token_sq": 37.97355323494858,
    "spread": 0.20098120602014136
   }
  },
  {
   "allocated": {
    "fixed": 1848226132.7722137,
    "floor": 0.0,
    "max_rel_residual": 0.00032955601106942635,
    "per_token": 1297531.3997641634,
    "per_token_sq": 1010.1591746811845,
    "spread": 0.0009352378154126818
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": null,
   "levers": "none",
   "model": "gpt2-small",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 6621845504,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-bf16-adamw-estimate-trace",
     "reserved": 7107248128,
     "seq": 1024
    },
    {
     "allocated": 4771443200,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 5419040768,
     "seq": 128
    },
    {
     "allocated": 31580543488,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 37331402752,
     "seq": 512
    },
    {
     "allocated": 52851297792,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-bf16-adamw-estimate-trace",
     "reserved": 65525514240,
     "seq": 256
    },
    {
     "allocated": 307560251904,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-bf16-adamw-estimate-trace",
     "reserved": 362505306112,
     "seq": 1024
    },
    {
     "allocated": 188808441344,
     "batch": 1024,
     "floor": false,
     "key": "gpt2-small-b1024-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 216048599040,
     "seq": 128
    }
   ],
   "precision": "amp-bf16",
   "range": {
    "seq": [
     128,
     1024
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "gpt2-small-amp-bf16-adamw-none",
   "replay_problem": null,
   "reserved": {
    "fixed": 1787366621.9289796,
    "floor": 0.0,
    "max_rel_residual": 0.04890039993257099,
    "per_token": 1572286.876095431,
    "per_token_sq": 1117.1883280526627,
    "spread": 0.11565294468859615
   }
  },
  {
   "allocated": {
    "fixed": 1816415195.0021093,
    "floor": 0.0,
    "max_rel_residual": 0.0016825512148664953,
    "per_token": 542261.6864124723,
    "per_token_sq": 2.3562837888542645,
    "spread": 0.0034202430335804946
   },
   "context_bytes": [
    471859200,
    1073741824
   ],
   "kind": {
    "en": "estimated (modelling CUDA)",
    "zh": "估算（模拟 CUDA）"
   },
   "lever_words": {
    "en": "checkpointing",
    "zh": "激活检查点"
   },
   "levers": "ckpt",
   "model": "gpt2-small",
   "optimizer": "adamw",
   "points": [
    {
     "allocated": 2929704960,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3701473280,
     "seq": 1024
    },
    {
     "allocated": 2928325120,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3896508416,
     "seq": 128
    },
    {
     "allocated": 10738664960,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 14256439296,
     "seq": 512
    },
    {
     "allocated": 19620744704,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 33030144000,
     "seq": 256
    },
    {
     "allocated": 73176713216,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 118812049408,
     "seq": 1024
    },
    {
     "allocated": 72818339840,
     "batch": 1024,
     "floor": false,
     "key": "gpt2-small-b1024-s128-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 104589164544,
     "seq": 128
    }
   ],
   "precision": "amp-bf16",
   "range": {
    "seq": [
     128,
     1024
    ],
    "tokens": [
     2048,
     131072
    ]
   },
   "replay": "gpt2-small-amp-bf16-adamw-ckpt",
   "replay_problem": null,
   "reserved": {
    "fixed": 2055905059.9457202,
    "floor": 0.0,
    "max_rel_residual": 0.12055996920577933,
    "per_token": 814440.4463645698,
    "per_token_sq": 36.30414606065736,
    "spread": 0.20742989597230185
   }
  }
 ],
 "lever_words": {
  "ckpt": {
   "en": "checkpointing",
   "zh": "激活检查点"
  },
  "none": null
 },
 "levers": [
  "none",
  "ckpt"
 ],
 "models": [
  "bert-base",
  "gpt2-small"
 ],
 "precisions": [
  "fp32",
  "amp-fp16",
  "amp-bf16"
 ],
 "schema_version": 2,
 "start": {
  "batch": 32,
  "seq": 128
 }
};
