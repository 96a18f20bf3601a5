# SPDX-License-Identifier: Apache-2.0
# TANDEM_SANITIZE=thread | address (address also enables undefined).
if(TANDEM_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(TANDEM_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT TANDEM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TANDEM_SANITIZE must be '', 'thread' or 'address', not '${TANDEM_SANITIZE}'")
endif()
