// The OpenCL entry points akview uses, resolved at run time from libOpenCL.so.1 (the ICD loader)
// with dlopen, so akview starts and runs without it. The headers give types and constants only.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace akview::compute {

struct OpenClApi {
  decltype(&::clGetPlatformIDs) GetPlatformIDs = nullptr;
  decltype(&::clGetPlatformInfo) GetPlatformInfo = nullptr;
  decltype(&::clGetDeviceIDs) GetDeviceIDs = nullptr;
  decltype(&::clGetDeviceInfo) GetDeviceInfo = nullptr;
  decltype(&::clCreateContext) CreateContext = nullptr;
  decltype(&::clReleaseContext) ReleaseContext = nullptr;
  decltype(&::clCreateCommandQueue) CreateCommandQueue = nullptr;
  decltype(&::clReleaseCommandQueue) ReleaseCommandQueue = nullptr;
  decltype(&::clCreateProgramWithSource) CreateProgramWithSource = nullptr;
  decltype(&::clBuildProgram) BuildProgram = nullptr;
  decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo = nullptr;
  decltype(&::clReleaseProgram) ReleaseProgram = nullptr;
  decltype(&::clCreateKernel) CreateKernel = nullptr;
  decltype(&::clReleaseKernel) ReleaseKernel = nullptr;
  decltype(&::clSetKernelArg) SetKernelArg = nullptr;
  decltype(&::clCreateBuffer) CreateBuffer = nullptr;
  decltype(&::clReleaseMemObject) ReleaseMemObject = nullptr;
  decltype(&::clEnqueueNDRangeKernel) EnqueueNDRangeKernel = nullptr;
  decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer = nullptr;
  decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer = nullptr;
};

// The process-wide API table, loaded on the first call; an unsupported Error when libOpenCL.so.1
// (or one of its entry points) is missing, with dlerror's sentence.
Result<const OpenClApi*> opencl_api();

// "CL_INVALID_BUFFER_SIZE (-61)" and the like.
std::string cl_error_name(cl_int code);

// A call the OpenCL runtime refused: "opencl: WHAT failed: CL_... (-n)", unsupported.
Error cl_call_error(std::string_view what, cl_int code);

}   // namespace akview::compute
