// Reads back the text fi_tostr(FI_TYPE_INFO) writes (and fi_info -v prints),
// so tests can compare it field by field with the fi_info it came from.
#ifndef FABSIM_TEST_INFO_TEXT_H
#define FABSIM_TEST_INFO_TEXT_H

#include <string>
#include <vector>

#include <rdma/fabric.h>

// Parses one "fi_info:" block. Returns a new fi_info (free with
// fi_freeinfo), or nullptr and a reason in *error. Addresses are not
// parsed back; their text is kept in *src_text / *dest_text.
fi_info *parse_info_text(const std::string &text, std::string *error,
			 std::string *src_text = nullptr,
			 std::string *dest_text = nullptr);

// Splits fi_info -v output into its "---"-separated blocks.
std::vector<std::string> split_info_blocks(const std::string &out);

// Every field fi_tostr prints, compared; the differences, one per line.
std::string diff_infos(const fi_info *a, const fi_info *b);

#endif
