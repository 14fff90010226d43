# The `fit` area's tool: akview_fit_models writes the ground-truth GGUFs for record_llama_truth.sh.
add_executable(akview_fit_models ${CMAKE_CURRENT_SOURCE_DIR}/fit/tool_fit_models.cpp)
target_link_libraries(akview_fit_models PRIVATE akview_writers)
