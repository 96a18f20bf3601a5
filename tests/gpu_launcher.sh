#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a GPU test on the GPUs CTest reserved for it (ctest --resource-spec-file,
# tests/gpu_resources.cmake.in): CTEST_RESOURCE_GROUP_<i>_GPUS ("id:3,slots:1")
# become CUDA_VISIBLE_DEVICES, so two tests side by side never share a GPU.
# The ids are the ordinals `tandem devices --ctest-resources` saw, so under a
# CUDA_VISIBLE_DEVICES of the caller's they pick from that list. Without a
# resource spec CTest sets nothing and the test sees every device.
ids=""
i=0
while [ "$i" -lt "${CTEST_RESOURCE_GROUP_COUNT:-0}" ]; do
  eval "group=\${CTEST_RESOURCE_GROUP_${i}_GPUS:-}"
  id=${group#id:}
  id=${id%%,*}
  if [ -n "$id" ] && [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    id=$(echo "$CUDA_VISIBLE_DEVICES" | cut -d, -f$((id + 1)))
  fi
  [ -n "$id" ] && ids="${ids:+$ids,}$id"
  i=$((i + 1))
done
[ -n "$ids" ] && export CUDA_VISIBLE_DEVICES="$ids"
exec "$@"
