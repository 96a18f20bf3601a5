# SPDX-License-Identifier: Apache-2.0
# Project-wide warning flags, applied per target through tandem_warnings().
function(tandem_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference
      -Wimplicit-fallthrough>)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # Clang checks the TANDEM_GUARDED_BY / TANDEM_REQUIRES annotations.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
  endif()
  if(TANDEM_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
