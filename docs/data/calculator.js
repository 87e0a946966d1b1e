window.CALCULATOR_DATA = {
 "fits": [
  {
   "allocated": {
    "fixed": 1399695207.237457,
    "floor": 0.0,
    "max_rel_residual": 0.00015386711649128,
    "per_token": 990575.5361446715,
    "per_token_sq": 1296.387764317917,
    "spread": 0.00033248406278601827
   },
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
     "allocated": 4788064768,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-fp32-adamw-estimate-trace",
     "reserved": 4955570176,
     "seq": 512
    },
    {
     "allocated": 3598189568,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-fp32-adamw-estimate-trace",
     "reserved": 3755999232,
     "seq": 64
    },
    {
     "allocated": 23066182144,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-fp32-adamw-estimate-trace",
     "reserved": 24201134080,
     "seq": 256
    },
    {
     "allocated": 39290273280,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-fp32-adamw-estimate-trace",
     "reserved": 42513465344,
     "seq": 128
    },
    {
     "allocated": 218234751488,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-fp32-adamw-estimate-trace",
     "reserved": 233486417920,
     "seq": 512
    },
    {
     "allocated": 142132771840,
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
    "fixed": 1395286043.9824991,
    "floor": 2273461248,
    "max_rel_residual": 0.0016539507360892863,
    "per_token": 419118.79860395566,
    "per_token_sq": 0.20572584142517455,
    "spread": 0.015675187879867346
   },
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
     "allocated": 2273461248,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3187671040,
     "seq": 512
    },
    {
     "allocated": 2269707264,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3175088128,
     "seq": 64
    },
    {
     "allocated": 8264483328,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-fp32-adamw-estimate-ckpt-trace",
     "reserved": 9992929280,
     "seq": 256
    },
    {
     "allocated": 15124004352,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-fp32-adamw-estimate-ckpt-trace",
     "reserved": 19253952512,
     "seq": 128
    },
    {
     "allocated": 56343005696,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 65959624704,
     "seq": 512
    },
    {
     "allocated": 56344134656,
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
    "fixed": 1663108703.145288,
    "floor": 0.0,
    "max_rel_residual": 0.002321395841726308,
    "per_token": 704343.8295197121,
    "per_token_sq": 1002.5336175959038,
    "spread": 0.006577095676907441
   },
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
     "allocated": 4147210240,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 4326424576,
     "seq": 512
    },
    {
     "allocated": 3243334144,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-amp-fp16-adamw-estimate-trace",
     "reserved": 3642753024,
     "seq": 64
    },
    {
     "allocated": 17398919168,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-fp16-adamw-estimate-trace",
     "reserved": 19593691136,
     "seq": 256
    },
    {
     "allocated": 28931652608,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 34233909248,
     "seq": 128
    },
    {
     "allocated": 161550174208,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 187183398912,
     "seq": 512
    },
    {
     "allocated": 102360545792,
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
    "fixed": 1436346008.5618558,
    "floor": 2302300672,
    "max_rel_residual": 0.002053720753253786,
    "per_token": 353613.72843725455,
    "per_token_sq": 0.036526517417757594,
    "spread": 0.0034599999666647735
   },
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
     "allocated": 2297582080,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3166699520,
     "seq": 512
    },
    {
     "allocated": 2302300672,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3063939072,
     "seq": 64
    },
    {
     "allocated": 7230395392,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 10169090048,
     "seq": 256
    },
    {
     "allocated": 13022620672,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 18826133504,
     "seq": 128
    },
    {
     "allocated": 47787505664,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 66565701632,
     "seq": 512
    },
    {
     "allocated": 47787764224,
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
    "fixed": 1658883860.6071687,
    "floor": 0.0,
    "max_rel_residual": 0.0016116569532148494,
    "per_token": 704147.0223256724,
    "per_token_sq": 1004.1361382372352,
    "spread": 0.004646303060973691
   },
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
     "allocated": 4147206144,
     "batch": 4,
     "floor": false,
     "key": "bert-base-b4-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 4326424576,
     "seq": 512
    },
    {
     "allocated": 3237038592,
     "batch": 32,
     "floor": false,
     "key": "bert-base-b32-s64-amp-bf16-adamw-estimate-trace",
     "reserved": 3391094784,
     "seq": 64
    },
    {
     "allocated": 17398915072,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-bf16-adamw-estimate-trace",
     "reserved": 19593691136,
     "seq": 256
    },
    {
     "allocated": 28931648512,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 34233909248,
     "seq": 128
    },
    {
     "allocated": 161550170112,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 187183398912,
     "seq": 512
    },
    {
     "allocated": 102360541696,
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
    "fixed": 1436197014.4462345,
    "floor": 2304656384,
    "max_rel_residual": 0.0010247574095876197,
    "per_token": 353596.3602614542,
    "per_token_sq": 0.0746952154530461,
    "spread": 0.006685543908211495
   },
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
     "allocated": 2302297088,
     "batch": 4,
     "floor": true,
     "key": "bert-base-b4-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3166699520,
     "seq": 512
    },
    {
     "allocated": 2304656384,
     "batch": 32,
     "floor": true,
     "key": "bert-base-b32-s64-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3063939072,
     "seq": 64
    },
    {
     "allocated": 7230391296,
     "batch": 64,
     "floor": false,
     "key": "bert-base-b64-s256-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 10169090048,
     "seq": 256
    },
    {
     "allocated": 13021043712,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s128-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 18826133504,
     "seq": 128
    },
    {
     "allocated": 47787501568,
     "batch": 256,
     "floor": false,
     "key": "bert-base-b256-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 66565701632,
     "seq": 512
    },
    {
     "allocated": 47787760128,
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
    "fixed": 1590830476.1024659,
    "floor": 0.0,
    "max_rel_residual": 0.0006664370432194634,
    "per_token": 1658137.5627925382,
    "per_token_sq": 1296.9432255583188,
    "spread": 0.002058357755460856
   },
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
     "allocated": 7701450752,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-fp32-adamw-estimate-trace",
     "reserved": 7983857664,
     "seq": 1024
    },
    {
     "allocated": 5328989184,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-fp32-adamw-estimate-trace",
     "reserved": 6002049024,
     "seq": 128
    },
    {
     "allocated": 39646237696,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-fp32-adamw-estimate-trace",
     "reserved": 42022731776,
     "seq": 512
    },
    {
     "allocated": 66805642752,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-fp32-adamw-estimate-trace",
     "reserved": 72550973440,
     "seq": 256
    },
    {
     "allocated": 393159200256,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-fp32-adamw-estimate-trace",
     "reserved": 419042426880,
     "seq": 1024
    },
    {
     "allocated": 240584438784,
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
    "fixed": 1763899484.0637145,
    "floor": 0.0,
    "max_rel_residual": 0.02328355272523019,
    "per_token": 1867492.9890637018,
    "per_token_sq": 1212.5498793498414,
    "spread": 0.06828863000415701
   }
  },
  {
   "allocated": {
    "fixed": 1563849335.925324,
    "floor": 0.0,
    "max_rel_residual": 0.0013424024892345191,
    "per_token": 644136.0498541277,
    "per_token_sq": 2.6259967724273694,
    "spread": 0.0029719695488170726
   },
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
     "allocated": 2888133632,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-fp32-adamw-estimate-ckpt-trace",
     "reserved": 3898605568,
     "seq": 1024
    },
    {
     "allocated": 2883133440,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-fp32-adamw-estimate-ckpt-trace",
     "reserved": 4297064448,
     "seq": 128
    },
    {
     "allocated": 12155720704,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-fp32-adamw-estimate-ckpt-trace",
     "reserved": 15934160896,
     "seq": 512
    },
    {
     "allocated": 22708475904,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-fp32-adamw-estimate-ckpt-trace",
     "reserved": 30039605248,
     "seq": 256
    },
    {
     "allocated": 86298193920,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-fp32-adamw-estimate-ckpt-trace",
     "reserved": 134632964096,
     "seq": 1024
    },
    {
     "allocated": 85938392064,
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
    "fixed": 2178195343.776241,
    "floor": 0.0,
    "max_rel_residual": 0.07953146490792115,
    "per_token": 856638.8775491832,
    "per_token_sq": 86.67317447602939,
    "spread": 0.2902640609816316
   }
  },
  {
   "allocated": {
    "fixed": 1837833848.653502,
    "floor": 0.0,
    "max_rel_residual": 0.00042441970432307923,
    "per_token": 1297423.0294428896,
    "per_token_sq": 1011.1777149013412,
    "spread": 0.0006178349323426683
   },
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
     "allocated": 6616149504,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-fp16-adamw-estimate-trace",
     "reserved": 7314866176,
     "seq": 1024
    },
    {
     "allocated": 4759573504,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-fp16-adamw-estimate-trace",
     "reserved": 5060427776,
     "seq": 128
    },
    {
     "allocated": 31577573376,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-fp16-adamw-estimate-trace",
     "reserved": 37329305600,
     "seq": 512
    },
    {
     "allocated": 52856598528,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-fp16-adamw-estimate-trace",
     "reserved": 65525514240,
     "seq": 256
    },
    {
     "allocated": 307562289152,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-fp16-adamw-estimate-trace",
     "reserved": 362505306112,
     "seq": 1024
    },
    {
     "allocated": 188807319552,
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
    "fixed": 1606088941.558068,
    "floor": 0.0,
    "max_rel_residual": 0.04964395660901122,
    "per_token": 1538665.7179472283,
    "per_token_sq": 1221.5949615279967,
    "spread": 0.08481106049735994
   }
  },
  {
   "allocated": {
    "fixed": 1820215593.301693,
    "floor": 0.0,
    "max_rel_residual": 0.0014712684871011777,
    "per_token": 541956.4572818724,
    "per_token_sq": 2.8391598168376357,
    "spread": 0.005508485730204396
   },
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
     "allocated": 2937233920,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3699376128,
     "seq": 1024
    },
    {
     "allocated": 2928382976,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 3896508416,
     "seq": 128
    },
    {
     "allocated": 10739247104,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 14256439296,
     "seq": 512
    },
    {
     "allocated": 19622244352,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 33030144000,
     "seq": 256
    },
    {
     "allocated": 73176640000,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-fp16-adamw-estimate-ckpt-trace",
     "reserved": 118812049408,
     "seq": 1024
    },
    {
     "allocated": 72818266624,
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
    "fixed": 2054758970.5962908,
    "floor": 0.0,
    "max_rel_residual": 0.1205249599709833,
    "per_token": 814561.4416204812,
    "per_token_sq": 36.10598170137016,
    "spread": 0.2078783813054572
   }
  },
  {
   "allocated": {
    "fixed": 1842288184.580254,
    "floor": 0.0,
    "max_rel_residual": 0.0003524992079256139,
    "per_token": 1297609.335962301,
    "per_token_sq": 1010.3718226426488,
    "spread": 0.000791189001751592
   },
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
     "allocated": 6617195520,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-bf16-adamw-estimate-trace",
     "reserved": 7107248128,
     "seq": 1024
    },
    {
     "allocated": 4765324800,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-bf16-adamw-estimate-trace",
     "reserved": 5419040768,
     "seq": 128
    },
    {
     "allocated": 31577570816,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-bf16-adamw-estimate-trace",
     "reserved": 37329305600,
     "seq": 512
    },
    {
     "allocated": 52856595968,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-bf16-adamw-estimate-trace",
     "reserved": 65525514240,
     "seq": 256
    },
    {
     "allocated": 307562286592,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-bf16-adamw-estimate-trace",
     "reserved": 362505306112,
     "seq": 1024
    },
    {
     "allocated": 188807316992,
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
    "fixed": 1787405013.2537107,
    "floor": 0.0,
    "max_rel_residual": 0.04888953810600542,
    "per_token": 1572272.119244225,
    "per_token_sq": 1117.1614544798351,
    "spread": 0.11562605476327692
   }
  },
  {
   "allocated": {
    "fixed": 1818903301.317351,
    "floor": 0.0,
    "max_rel_residual": 0.0015416288356035355,
    "per_token": 541914.0393222668,
    "per_token_sq": 2.9880634981394842,
    "spread": 0.006710102819660961
   },
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
     "allocated": 2937231360,
     "batch": 2,
     "floor": false,
     "key": "gpt2-small-b2-s1024-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3699376128,
     "seq": 1024
    },
    {
     "allocated": 2925876736,
     "batch": 16,
     "floor": false,
     "key": "gpt2-small-b16-s128-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 3896508416,
     "seq": 128
    },
    {
     "allocated": 10739244544,
     "batch": 32,
     "floor": false,
     "key": "gpt2-small-b32-s512-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 14256439296,
     "seq": 512
    },
    {
     "allocated": 19622241792,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s256-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 33030144000,
     "seq": 256
    },
    {
     "allocated": 73176637440,
     "batch": 128,
     "floor": false,
     "key": "gpt2-small-b128-s1024-amp-bf16-adamw-estimate-ckpt-trace",
     "reserved": 118812049408,
     "seq": 1024
    },
    {
     "allocated": 72818264064,
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
    "fixed": 2054758970.5962908,
    "floor": 0.0,
    "max_rel_residual": 0.1205249599709833,
    "per_token": 814561.4416204812,
    "per_token_sq": 36.10598170137016,
    "spread": 0.2078783813054572
   }
  }
 ],
 "gpus": [
  {
   "context_bytes": [
    262144000,
    838860800
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
    838860800
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
    838860800
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
    838860800
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
 "schema_version": 3,
 "start": {
  "batch": 32,
  "gpu": "NVIDIA H100 80GB HBM3",
  "seq": 128
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
