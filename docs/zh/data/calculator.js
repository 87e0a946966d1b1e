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
    "fixed": 1399798631.1282556,
    "floor": 0.0,
    "max_rel_residual": 0.00015386725939509614,
    "per_token": 990575.5376645123,
    "per_token_sq": 1296.3877576029433,
    "spread": 0.00033248389859375426
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
     "allocated": 4788168192,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-fp32-adamw-estimate-trace",
     "reserved": 4955570176,
     "seq": 512
    },
    {
     "allocated": 3598292992,
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
    "floor": 2273564672,
    "max_rel_residual": 0.0016538753737686163,
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
     "allocated": 2273564672,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3187671040,
     "seq": 512
    },
    {
     "allocated": 2269810688,
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
    "fixed": 1663212029.5642676,
    "floor": 0.0,
    "max_rel_residual": 0.0023213513651167282,
    "per_token": 704343.7936893887,
    "per_token_sq": 1002.5338336900313,
    "spread": 0.006576891080538535
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
     "allocated": 4147313664,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 4326424576,
     "seq": 512
    },
    {
     "allocated": 3243437568,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-amp-fp16-adamw-estimate-trace",
     "reserved": 3642753024,
     "seq": 64
    },
    {
     "allocated": 17399022592,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-fp16-adamw-estimate-trace",
     "reserved": 19593691136,
     "seq": 256
    },
    {
     "allocated": 28931756032,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 34233909248,
     "seq": 128
    },
    {
     "allocated": 161550277632,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 187183398912,
     "seq": 512
    },
    {
     "allocated": 102360649216,
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
    "fixed": 1616087963.6414003,
    "floor": 0.0,
    "max_rel_residual": 0.030933289619104295,
    "per_token": 885384.0136316685,
    "per_token_sq": 949.622083055903,
    "spread": 0.09393720909160728
   }
  },
  {
   "allocated": {
    "fixed": 1436449426.2637057,
    "floor": 2302404096,
    "max_rel_residual": 0.00205362831065674,
    "per_token": 353613.72870420467,
    "per_token_sq": 0.036526065147326245,
    "spread": 0.003459992478224621
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
     "allocated": 2297685504,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3166699520,
     "seq": 512
    },
    {
     "allocated": 2302404096,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3063939072,
     "seq": 64
    },
    {
     "allocated": 7230498816,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 10169090048,
     "seq": 256
    },
    {
     "allocated": 13022724096,
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
    "fixed": 2173289240.492492,
    "floor": 0.0,
    "max_rel_residual": 0.09095409055968581,
    "per_token": 441130.1029504065,
    "per_token_sq": 115.77110252786555,
    "spread": 0.19238900958772365
   }
  },
  {
   "allocated": {
    "fixed": 1658987213.3291206,
    "floor": 0.0,
    "max_rel_residual": 0.0016116256860224652,
    "per_token": 704146.9974915155,
    "per_token_sq": 1004.136290012294,
    "spread": 0.004646159753928403
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
     "allocated": 4147309568,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 4326424576,
     "seq": 512
    },
    {
     "allocated": 3237142016,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-amp-bf16-adamw-estimate-trace",
     "reserved": 3391094784,
     "seq": 64
    },
    {
     "allocated": 17399018496,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-bf16-adamw-estimate-trace",
     "reserved": 19593691136,
     "seq": 256
    },
    {
     "allocated": 28931751936,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 34233909248,
     "seq": 128
    },
    {
     "allocated": 161550273536,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 187183398912,
     "seq": 512
    },
    {
     "allocated": 102360645120,
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
    "fixed": 1454313657.0749645,
    "floor": 0.0,
    "max_rel_residual": 0.02504751981325817,
    "per_token": 875413.5526560569,
    "per_token_sq": 1022.1899030571033,
    "spread": 0.03764200588356362
   }
  },
  {
   "allocated": {
    "fixed": 1436300426.2751439,
    "floor": 2304759808,
    "max_rel_residual": 0.0010247113774095617,
    "per_token": 353596.3607773887,
    "per_token_sq": 0.07469434132884212,
    "spread": 0.006685529439118725
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
     "allocated": 2302400512,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3166699520,
     "seq": 512
    },
    {
     "allocated": 2304759808,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3063939072,
     "seq": 64
    },
    {
     "allocated": 7230494720,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 10169090048,
     "seq": 256
    },
    {
     "allocated": 13021147136,
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
    "fixed": 2173289240.492492,
    "floor": 0.0,
    "max_rel_residual": 0.09095409055968581,
    "per_token": 441130.1029504065,
    "per_token_sq": 115.77110252786555,
    "spread": 0.19238900958772365
   }
  },
  {
   "allocated": {
    "fixed": 1590906236.3333406,
    "floor": 0.0,
    "max_rel_residual": 0.0006664338505331496,
    "per_token": 1658137.5516205297,
    "per_token_sq": 1296.943256343295,
    "spread": 0.0020583271341523125
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
     "allocated": 7701526528,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-fp32-adamw-estimate-trace",
     "reserved": 7983857664,
     "seq": 1024
    },
    {
     "allocated": 5329064960,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-fp32-adamw-estimate-trace",
     "reserved": 6002049024,
     "seq": 128
    },
    {
     "allocated": 39646313472,
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
    "fixed": 1563925140.6600757,
    "floor": 0.0,
    "max_rel_residual": 0.0013423962508666385,
    "per_token": 644136.0465515716,
    "per_token_sq": 2.6259967110068425,
    "spread": 0.002972021641537387
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
     "allocated": 2888209408,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3900702720,
     "seq": 1024
    },
    {
     "allocated": 2883209216,
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
     "allocated": 22708551680,
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
    "fixed": 1837909631.2759151,
    "floor": 0.0,
    "max_rel_residual": 0.00042441905078289903,
    "per_token": 1297423.0304203473,
    "per_token_sq": 1011.1777105777851,
    "spread": 0.0006178339277297189
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
     "allocated": 6616225280,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-fp16-adamw-estimate-trace",
     "reserved": 7314866176,
     "seq": 1024
    },
    {
     "allocated": 4759649280,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 5060427776,
     "seq": 128
    },
    {
     "allocated": 31577649152,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 37331402752,
     "seq": 512
    },
    {
     "allocated": 52856674304,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-fp16-adamw-estimate-trace",
     "reserved": 65525514240,
     "seq": 256
    },
    {
     "allocated": 307562364928,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-fp16-adamw-estimate-trace",
     "reserved": 362505306112,
     "seq": 1024
    },
    {
     "allocated": 188807395328,
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
    "fixed": 1606051254.986137,
    "floor": 0.0,
    "max_rel_residual": 0.04963366462863847,
    "per_token": 1538680.38868995,
    "per_token_sq": 1221.6225397603919,
    "spread": 0.08483769678420165
   }
  },
  {
   "allocated": {
    "fixed": 1820291407.0430949,
    "floor": 0.0,
    "max_rel_residual": 0.001471260794815708,
    "per_token": 541956.4584307732,
    "per_token_sq": 2.8391496313697986,
    "spread": 0.005508517295033497
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
     "allocated": 2937309696,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3701473280,
     "seq": 1024
    },
    {
     "allocated": 2928458752,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3896508416,
     "seq": 128
    },
    {
     "allocated": 10739322880,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 14256439296,
     "seq": 512
    },
    {
     "allocated": 19622320128,
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
    "fixed": 2055905059.9457202,
    "floor": 0.0,
    "max_rel_residual": 0.12055996920577933,
    "per_token": 814440.4463645698,
    "per_token_sq": 36.30414606065736,
    "spread": 0.20742989597230185
   }
  },
  {
   "allocated": {
    "fixed": 1842363957.2352846,
    "floor": 0.0,
    "max_rel_residual": 0.00035249954154924706,
    "per_token": 1297609.3323267824,
    "per_token_sq": 1010.3718319562829,
    "spread": 0.0007911877854215053
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
     "allocated": 6617271296,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-bf16-adamw-estimate-trace",
     "reserved": 7107248128,
     "seq": 1024
    },
    {
     "allocated": 4765400576,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 5419040768,
     "seq": 128
    },
    {
     "allocated": 31577646592,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 37331402752,
     "seq": 512
    },
    {
     "allocated": 52856671744,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-bf16-adamw-estimate-trace",
     "reserved": 65525514240,
     "seq": 256
    },
    {
     "allocated": 307562362368,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-bf16-adamw-estimate-trace",
     "reserved": 362505306112,
     "seq": 1024
    },
    {
     "allocated": 188807392768,
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
    "fixed": 1818979118.1035378,
    "floor": 0.0,
    "max_rel_residual": 0.0015416209829988664,
    "per_token": 541914.0435993517,
    "per_token_sq": 2.988046409633909,
    "spread": 0.006710117893695457
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
     "allocated": 2937307136,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3701473280,
     "seq": 1024
    },
    {
     "allocated": 2925952512,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3896508416,
     "seq": 128
    },
    {
     "allocated": 10739320320,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 14256439296,
     "seq": 512
    },
    {
     "allocated": 19622317568,
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
