#pragma once
// Sapiens2 Studio's engine as front ends see it: no LibTorch type anywhere below this header
// (tools/check-include-graph fails the build's tests if one comes back). Include this, or the single
// headers it lists; the studio and the widgets use nothing else of core's model, pipeline, run and
// finetune areas.
//
// The tensor tier (model/model.h, model/compute_options.h, model/safetensors_torch.h,
// model/tensor_difference.h, model/linear_product.h, finetune/finetuned_model_file.h, and the pipeline's
// tensor steps in core/src) is for the code that handles tensors itself: the CLI's forward, bench and
// doctor commands, and the tests.

#include "sapiens/finetune/feature_cache.h"  // backbone features shared between fine-tuning runs
#include "sapiens/finetune/fine_tuner.h"     // training a task head on a label set
#include "sapiens/model/compute_choices.h"   // the devices and precisions to offer
#include "sapiens/model/loaded_model.h"      // load a checkpoint; its device, precision, architecture
#include "sapiens/model/task.h"              // the tasks, in run order
#include "sapiens/model/task_checkpoints.h"  // which checkpoint each task runs: explicit > found > demo
#include "sapiens/pipeline/input_size.h"     // the network input size and its "HxW" spelling
#include "sapiens/pipeline/run_failure.h"    // what a failed run says (out of memory, bad input...)
#include "sapiens/pipeline/task_analysis.h"  // one picture through one task model -> FrameResult
#include "sapiens/pipeline/task_models.h"    // the task models of a run, loaded once
#include "sapiens/result/frame_result.h"     // what a run gives
#include "sapiens/run/batch_run.h"           // folders and lists of pictures
#include "sapiens/run/frame_export.h"        // the files a result is written as
#include "sapiens/run/video_run.h"           // videos, cameras and picture sequences
