# run 129 (session 29): the fixes after run 128's check on an H100: gpu_api (kernel 4's refusal of an x at an element
# offset), gpu_kernels/ws_tile_configs (cut by run 128's 200 s suite timeout), ws_streamk_graph, check_model --quick
# (the binding's clone of a misaligned x: offset_x).
. bundle/plan_lib.sh; plan_init "$1" r129
plan_suite test_maxgemm "gpu_api/*" gpu_api 60 --verbose
plan_python libmaxgemm.so check_model 120 --quick
plan_suite test_maxgemm "gpu_kernels/ws_tile_configs" ws_tile_configs 240 --verbose
plan_suite test_maxgemm "gpu_kernels/ws_streamk_graph" ws_streamk_graph 60 --verbose
cat $O/steps.txt
