#include "api/selectors.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

LabelSelector MustParse(std::string_view text) {
  auto s = LabelSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status();
  return s.ok() ? *s : LabelSelector::Nothing();
}

TEST(LabelSelectorParseTest, CanonicalString) {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"", ""},
      {"a=b", "a=b"},
      {"a==b", "a==b"},
      {"a!=b", "a!=b"},
      {"a", "a"},
      {"!a", "!a"},
      {"  a = b ,  c  ", "a=b,c"},
      {"x in (b,a,b)", "x in (a,b)"},
      {"x notin (z)", "x notin (z)"},
      {"x in ()", "x in ()"},
      {"x in (,a)", "x in (,a)"},
      {"!b,a in (x,y),c=d", "a in (x,y),!b,c=d"},
      {"a=", "a="},
      {"a>5,a<10", "a<10,a>5"},
      {"in=notin", "in=notin"},
      {"kueue.x-k8s.io/queue-name=lq", "kueue.x-k8s.io/queue-name=lq"},
      {"app in (a,b),!tier", "app in (a,b),!tier"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MustParse(c.in).String(), c.out) << c.in;
    // The canonical form parses to the same selector.
    EXPECT_EQ(MustParse(MustParse(c.in).String()), MustParse(c.in)) << c.in;
  }
  EXPECT_TRUE(MustParse("").IsEverything());
}

TEST(LabelSelectorParseTest, ErrorsAsKubernetes) {
  const std::string kNamePart =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
      "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
      "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  struct Case {
    const char* in;
    std::string message;
  };
  const Case cases[] = {
      {"a in", "unable to parse requirement: found '' expected: '('"},
      {"a in (b", "unable to parse requirement: found '', expected: ',' or ')'"},
      {"a notin b", "unable to parse requirement: found 'b' expected: '('"},
      {"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
      {"a=b c", "found 'c', expected: ',' or 'end of string'"},
      {"a=b,", "found '', expected: identifier after ','"},
      {",a", "found ',', expected: !, identifier, or 'end of string'"},
      {"=a", "found '=', expected: !, identifier, or 'end of string'"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
      {"!a=b", "found '=', expected: ',' or 'end of string'"},
      {"a=(b)", "unable to parse requirement: found '(', expected: identifier"},
      {"-a=b", "unable to parse requirement: <nil>: Invalid value: \"-a\": " + kNamePart},
      {"a=b c d", "found 'c', expected: ',' or 'end of string'"},
      {"a>x",
       "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' "
       "operators, the value must be an integer"},
      {"a=b/c",
       "unable to parse requirement: values[0][a]: Invalid value: \"b/c\": a valid label must be "
       "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
       "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
       "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
  };
  for (const auto& c : cases) {
    auto s = LabelSelector::Parse(c.in);
    ASSERT_FALSE(s.ok()) << c.in << " parsed as " << s->String();
    EXPECT_EQ(s.status().code(), Code::kBadRequest);
    EXPECT_EQ(s.status().message(), c.message) << c.in;
  }
}

TEST(LabelSelectorMatchTest, Table) {
  json labels = {{"app", "demo"}, {"tier", "web"}, {"gen", "7"}};
  struct Case {
    const char* selector;
    bool want;
  };
  const Case cases[] = {
      {"", true},
      {"app=demo", true},
      {"app==demo", true},
      {"app=other", false},
      {"app!=demo", false},
      {"app!=other", true},
      {"missing!=x", true},
      {"app", true},
      {"missing", false},
      {"!missing", true},
      {"!app", false},
      {"app in (x,demo)", true},
      {"app in (x)", false},
      {"app notin (x)", true},
      {"app notin (demo)", false},
      {"missing notin (x)", true},
      {"missing in (x)", false},
      {"app=demo,tier=db", false},
      {"app=demo,tier in (web)", true},
      {"gen>5", true},
      {"gen<5", false},
      {"app>5", false},
      {"missing>1", false},
      {"tier=", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MustParse(c.selector).Matches(labels), c.want) << c.selector;
  }
  EXPECT_TRUE(MustParse("a=").Matches(json{{"a", ""}}));
  EXPECT_TRUE(MustParse("!a").Matches(nullptr));
  EXPECT_FALSE(LabelSelector::Nothing().Matches(labels));
  EXPECT_TRUE(MustParse("app=demo").MatchesObject(json{{"metadata", {{"labels", labels}}}}));
  EXPECT_FALSE(MustParse("app=demo").MatchesObject(json{{"metadata", {{"name", "x"}}}}));
}

TEST(LabelSelectorJsonTest, NilMatchesNothingEmptyMatchesEverything) {
  json labels = {{"team", "eng"}};
  auto nil = LabelSelector::FromJson(nullptr);
  ASSERT_TRUE(nil.ok());
  EXPECT_TRUE(nil->IsNothing());
  EXPECT_FALSE(nil->Matches(labels));
  auto empty = LabelSelector::FromJson(json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->IsEverything());
  EXPECT_TRUE(empty->Matches(labels));
  EXPECT_TRUE(empty->Matches(nullptr));
}

TEST(LabelSelectorJsonTest, MatchLabelsAndExpressions) {
  json sel = {{"matchLabels", {{"team", "eng"}}},
              {"matchExpressions",
               {{{"key", "dep"}, {"operator", "In"}, {"values", {"eng", "research"}}},
                {{"key", "frozen"}, {"operator", "DoesNotExist"}},
                {{"key", "tier"}, {"operator", "NotIn"}, {"values", {"batch"}}},
                {{"key", "team"}, {"operator", "Exists"}}}}};
  auto s = LabelSelector::FromJson(sel);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->String(), "dep in (eng,research),!frozen,team,team=eng,tier notin (batch)");
  EXPECT_TRUE(s->Matches(json{{"team", "eng"}, {"dep", "research"}}));
  EXPECT_FALSE(s->Matches(json{{"team", "eng"}, {"dep", "sales"}}));
  EXPECT_FALSE(s->Matches(json{{"team", "eng"}, {"dep", "eng"}, {"frozen", "1"}}));
  EXPECT_FALSE(s->Matches(json{{"team", "eng"}, {"dep", "eng"}, {"tier", "batch"}}));
  EXPECT_EQ(s->RequiresExactMatch("team"), "eng");
  EXPECT_EQ(s->RequiresExactMatch("dep"), std::nullopt);

  auto bad_op = LabelSelector::FromJson(json{{"matchExpressions", {{{"key", "a"}, {"operator", "Foo"}}}}});
  ASSERT_FALSE(bad_op.ok());
  EXPECT_EQ(bad_op.status().message(), "\"Foo\" is not a valid label selector operator");
  auto empty_in = LabelSelector::FromJson(
      json{{"matchExpressions", {{{"key", "a"}, {"operator", "In"}, {"values", json::array()}}}}});
  ASSERT_FALSE(empty_in.ok());
  EXPECT_EQ(empty_in.status().message(),
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty");
  auto exists_with_values =
      LabelSelector::FromJson(json{{"matchExpressions", {{{"key", "a"}, {"operator", "Exists"}, {"values", {"x"}}}}}});
  ASSERT_FALSE(exists_with_values.ok());
  EXPECT_EQ(exists_with_values.status().message(),
            "values: Invalid value: [\"x\"]: values set must be empty for exists and does not "
            "exist");
  auto from_set = LabelSelector::FromSet(json{{"b", "2"}, {"a", "1"}});
  ASSERT_TRUE(from_set.ok());
  EXPECT_EQ(from_set->String(), "a=1,b=2");
}

TEST(LabelSelectorJsonTest, ValidateLabelSelectorPaths) {
  json sel = {{"matchLabels", {{"ok", "bad value"}}},
              {"matchExpressions",
               {{{"key", "a"}, {"operator", "In"}},
                {{"key", "b"}, {"operator", "Exists"}, {"values", {"x"}}},
                {{"key", "c"}, {"operator", "Gt"}, {"values", {"1"}}}}}};
  std::vector<std::string> got;
  for (const auto& e : ValidateLabelSelector(sel, FieldPath("spec.namespaceSelector"))) {
    got.push_back(e.Error());
  }
  ASSERT_EQ(got.size(), 4u);
  EXPECT_THAT(got[0], HasSubstr("spec.namespaceSelector.matchLabels: Invalid value: \"bad value\""));
  EXPECT_EQ(got[1],
            "spec.namespaceSelector.matchExpressions[0].values: Required value: must be "
            "specified when `operator` is 'In' or 'NotIn'");
  EXPECT_EQ(got[2],
            "spec.namespaceSelector.matchExpressions[1].values: Forbidden: may not be specified "
            "when `operator` is 'Exists' or 'DoesNotExist'");
  EXPECT_EQ(got[3],
            "spec.namespaceSelector.matchExpressions[2].operator: Invalid value: \"Gt\": not a "
            "valid selector operator");
  EXPECT_TRUE(ValidateLabelSelector(nullptr, FieldPath("s")).empty());
}

// A selector of tens of thousands of terms (a 170 KB query string) parses, in
// key order, as a short one does: sorted once, not once per term.
TEST(LabelSelectorParseTest, ManyTermsParseSorted) {
  std::string text;
  for (int i = 19'999; i >= 0; --i) text += (text.empty() ? "" : ",") + ("k" + std::to_string(i)) + "=v";
  auto sel = LabelSelector::Parse(text);
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  ASSERT_EQ(sel->requirements().size(), 20'000u);
  EXPECT_TRUE(std::is_sorted(sel->requirements().begin(), sel->requirements().end(),
                             [](const auto& a, const auto& b) { return a.key < b.key; }));
  EXPECT_EQ(sel->requirements().front().key, "k0");
  json labels = json::object();
  for (int i = 0; i < 20'000; ++i) labels["k" + std::to_string(i)] = "v";
  EXPECT_TRUE(sel->Matches(labels));
}

// A selector that did not pass the schema (the selector fuzzer calls these directly) never throws:
// every member of every wrong type is reported, or refused by FromJson, with no exception.
TEST(LabelSelectorJsonTest, MembersOfAnyTypeNeverThrow) {
  const std::vector<json> wrong = {
      json(nullptr), json(1), json(-2.5), json(true), json("s"), json::array({"/", "w"}), json::object({{"a", 1}})};
  auto check = [](const json& sel) {
    SCOPED_TRACE(sel.dump());
    EXPECT_NO_THROW(ValidateLabelSelector(sel, FieldPath("spec.selector")));
    EXPECT_NO_THROW((void)LabelSelector::FromJson(sel));
  };
  for (const json& v : wrong) {
    for (const char* member : {"key", "operator", "values"}) {
      json expr = {{"key", "a"}, {"operator", "In"}, {"values", {"x"}}};
      expr[member] = v;
      check(json{{"matchExpressions", json::array({expr})}});
    }
    check(json{{"matchExpressions", json::array({v})}});
    check(json{{"matchExpressions", v}});
    check(json{{"matchLabels", v}});
    check(json{{"matchLabels", {{"a", v}}}});
  }
  // The fuzzer's input: a key that is an array is an invalid key, not a crash.
  json sel = {{"matchExpressions", json::array({json{{"key", {"/", "w"}}, {"operator", "Exists"}}})}};
  auto errs = ValidateLabelSelector(sel, FieldPath("spec.selector"));
  ASSERT_FALSE(errs.empty());
  EXPECT_THAT(errs[0].Error(), HasSubstr("spec.selector.matchExpressions[0].key"));
  EXPECT_FALSE(LabelSelector::FromJson(sel).ok());
}

TEST(FieldSelectorTest, ParseAndString) {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"", ""},
      {"metadata.name=x", "metadata.name=x"},
      {"metadata.name==x", "metadata.name=x"},
      {"status.phase!=Failed,spec.nodeName=node-1", "spec.nodeName=node-1,status.phase!=Failed"},
      {"spec.nodeName=", "spec.nodeName="},
      {"involvedObject.name=p1,involvedObject.namespace=default",
       "involvedObject.name=p1,involvedObject.namespace=default"},
      {"a=b\\,c\\=d\\\\", "a=b\\,c\\=d\\\\"},
  };
  for (const auto& c : cases) {
    auto s = FieldSelector::Parse(c.in);
    ASSERT_TRUE(s.ok()) << c.in << ": " << s.status();
    EXPECT_EQ(s->String(), c.out) << c.in;
  }
  auto escaped = FieldSelector::Parse("a=b\\,c");
  ASSERT_TRUE(escaped.ok());
  ASSERT_EQ(escaped->requirements().size(), 1u);
  EXPECT_EQ(escaped->requirements()[0].value, "b,c");
}

// Terms written in a second form ("==", "=" with an empty field) order as their
// canonical text, so String() parses back to the same selector (selector fuzzer).
TEST(FieldSelectorTest, StringParsesBackWhateverFormTheTermsWereWrittenIn) {
  for (const char* text : {"=3,==", "a==1,a=0", "x=b\\,c,x=a", "b!=1,a==2,a=1"}) {
    auto sel = FieldSelector::Parse(text);
    ASSERT_TRUE(sel.ok()) << text;
    auto back = FieldSelector::Parse(sel->String());
    ASSERT_TRUE(back.ok()) << sel->String();
    EXPECT_EQ(*back, *sel) << text << " -> " << sel->String() << " -> " << back->String();
    EXPECT_EQ(back->String(), sel->String());
  }
}

TEST(FieldSelectorTest, Errors) {
  auto no_op = FieldSelector::Parse("metadata.name=x,foo");
  ASSERT_FALSE(no_op.ok());
  EXPECT_EQ(no_op.status().code(), Code::kBadRequest);
  EXPECT_EQ(no_op.status().message(), "invalid selector: 'metadata.name=x,foo'; can't understand 'foo'");
  auto unescaped = FieldSelector::Parse("a==b=c");
  ASSERT_FALSE(unescaped.ok());
  EXPECT_EQ(unescaped.status().message(), "invalid field selector: unescaped character: =");
  auto bad_escape = FieldSelector::Parse("a=b\\x");
  ASSERT_FALSE(bad_escape.ok());
  EXPECT_EQ(bad_escape.status().message(), "invalid field selector: invalid escape sequence: \\x");
}

TEST(FieldSelectorTest, MatchesByDottedPath) {
  json pod = {{"metadata", {{"name", "p1"}, {"namespace", "default"}}},
              {"spec", {{"nodeName", "node-1"}, {"priority", 5}}},
              {"status", {{"phase", "Running"}, {"ready", true}}}};
  json pending = {{"metadata", {{"name", "p2"}, {"namespace", "default"}}}, {"status", {{"phase", "Pending"}}}};
  struct Case {
    const char* selector;
    bool p1;
    bool p2;
  };
  const Case cases[] = {
      {"", true, true},
      {"metadata.name=p1", true, false},
      {"metadata.namespace!=kube-system", true, true},
      {"spec.nodeName=", false, true},  // absent field reads as ""
      {"spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed", true, false},
      {"status.phase==Pending", false, true},
      {"spec.priority=5", true, false},
      {"status.ready=true", true, false},
      {"no.such.path=", true, true},
      {"metadata=", true, true},  // objects read as ""
  };
  for (const auto& c : cases) {
    auto s = FieldSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector;
    EXPECT_EQ(s->Matches(pod), c.p1) << c.selector;
    EXPECT_EQ(s->Matches(pending), c.p2) << c.selector;
  }
  auto s = FieldSelector::Parse("spec.nodeName=node-1,status.phase!=Failed");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->RequiresExactMatch("spec.nodeName"), "node-1");
  EXPECT_EQ(s->RequiresExactMatch("status.phase"), std::nullopt);
}

}  // namespace
}  // namespace berth::api
