// The `ringrl` commands' numeric options: add_unsigned() and add_real() of
// common/cli_numbers.h (which holds the contract), named in ringrl::app, where every command
// family declares its options. They live in common/ so that bench/, which registers
// `ringrl bench ring`, declares its options the same way without including app/.
#pragma once

#include "common/cli_numbers.h"

namespace ringrl::app {

using ringrl::add_real;
using ringrl::add_unsigned;

}  // namespace ringrl::app
