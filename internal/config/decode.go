package config

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// This file decodes an HCL body into the range-keeping structs of config.go
// and scenario.go. Each of those structs is a node: its attributes are its
// fields tagged `hcl:"<name>"` (fieldsOf), and it lists the block types it may
// contain (children); decodeBody walks a body against those lists and reports
// unknown keys and blocks, wrong types, bad durations and misplaced labels.

// node is a block's decoded form, a pointer to a struct. Its attributes are
// its struct fields tagged `hcl:"<name>"`, in struct order, unless it lists
// them itself (a lister); children are the block types it may contain.
type node interface {
	children() []child
}

// lister is a node whose attributes are only known at run time.
type lister interface {
	fields() []field
}

// fieldsOf is n's attributes: its own list when it is a lister, else its
// tagged struct fields, each of which must be a value.
func fieldsOf(n node) []field {
	if l, ok := n.(lister); ok {
		return l.fields()
	}
	v := reflect.ValueOf(n).Elem()
	var fs []field
	for i := range v.NumField() {
		if name, ok := v.Type().Field(i).Tag.Lookup("hcl"); ok {
			fs = append(fs, field{name, v.Field(i).Addr().Interface().(value)})
		}
	}
	return fs
}

// field binds an attribute name to the value it decodes into.
type field struct {
	name string
	dst  value
}

// child declares a block type a body may contain. Every block here takes no
// label or exactly one.
type child struct {
	typ      string
	label    string // what the block's label names, e.g. "name"; empty: the block takes no label
	once     bool   // at most one such block
	required bool   // at least one such block
	example  string // e.g. `domain "payment" { ... }`, for hints
	// open records a new block and returns it for decoding.
	open func(def hcl.Range, l label) node
}

// label is a block label and where it is written.
type label struct {
	V     string
	Range hcl.Range
}

// attr is what every decoded attribute keeps besides its value.
type attr struct {
	Name string
	// Range is the value's source range, or the enclosing block's definition
	// range when the attribute is not set. It is zero when that block is absent.
	Range hcl.Range
	Set   bool // the file sets the attribute
	Bad   bool // the file sets it to a value that could not be decoded (already reported)
}

func (a *attr) base() *attr { return a }

// ok reports whether the attribute is set to a decodable value.
func (a *attr) ok() bool { return a.Set && !a.Bad }

// value is an attribute value of one type.
type value interface {
	base() *attr
	// decode sets the value from v, the evaluated expr, or returns a hint
	// saying why v does not fit.
	decode(v cty.Value, expr hcl.Expression) (hint string)
}

// numberAttr is a number.
type numberAttr struct {
	attr
	V float64
}

func (n *numberAttr) decode(v cty.Value, _ hcl.Expression) string {
	if v.Type() != cty.Number {
		return wantGot("a number", v)
	}
	f, _ := v.AsBigFloat().Float64()
	if math.IsInf(f, 0) {
		return "the number is too large"
	}
	n.V = f
	return ""
}

// intAttr is a whole number.
type intAttr struct {
	attr
	V int
}

func (n *intAttr) decode(v cty.Value, _ hcl.Expression) string {
	if v.Type() != cty.Number {
		return wantGot("a whole number", v)
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return fmt.Sprintf("want a whole number, got %s", bf.Text('g', 10))
	}
	i, acc := bf.Int64()
	if acc != big.Exact || int64(int(i)) != i {
		return "the number is too large"
	}
	n.V = int(i)
	return ""
}

// stringAttr is a string.
type stringAttr struct {
	attr
	V string
}

func (s *stringAttr) decode(v cty.Value, _ hcl.Expression) string {
	if v.Type() != cty.String {
		return wantGot("a string", v)
	}
	s.V = v.AsString()
	return ""
}

// boolAttr is true or false.
type boolAttr struct {
	attr
	V bool
}

func (b *boolAttr) decode(v cty.Value, _ hcl.Expression) string {
	if v.Type() != cty.Bool {
		return wantGot("true or false", v)
	}
	b.V = v.True()
	return ""
}

// mapAttr is a map of strings, written { "key" = "value" }.
type mapAttr struct {
	attr
	V map[string]string
}

func (m *mapAttr) decode(v cty.Value, _ hcl.Expression) string {
	ty := v.Type()
	if v.IsNull() || !ty.IsObjectType() && !ty.IsMapType() {
		return wantGot(`a map of strings (example: { "X-Scope-OrgID" = "tenant-1" })`, v)
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			return fmt.Sprintf("%s: %s", clip(k.AsString()), wantGot("a string", e))
		}
		out[k.AsString()] = e.AsString()
	}
	m.V = out
	return ""
}

// durationAttr is a duration written as a string with a unit, e.g. "150ms", "3m", "168h".
type durationAttr struct {
	attr
	V time.Duration
}

func (d *durationAttr) decode(v cty.Value, _ hcl.Expression) string {
	if v.Type() == cty.Number {
		f, _ := v.AsBigFloat().Float64()
		return fmt.Sprintf("%g has no unit; durations are strings with a unit (example: \"%gs\")", f, f)
	}
	if v.Type() != cty.String {
		return wantGot(`a duration (example: "30s")`, v)
	}
	s := v.AsString()
	dur, err := time.ParseDuration(s)
	if err == nil {
		d.V = dur
		return ""
	}
	if n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64); err == nil && strings.HasSuffix(s, "d") {
		return fmt.Sprintf("%s is not a duration; there is no day unit (example: \"%gh\")", clip(s), n*24)
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Sprintf("%s has no unit (example: \"%ss\")", clip(s), s)
	}
	return fmt.Sprintf("%s is not a duration (example: \"30s\")", clip(s))
}

// timeAttr is an RFC 3339 time.
type timeAttr struct {
	attr
	V time.Time
}

func (t *timeAttr) decode(v cty.Value, _ hcl.Expression) string {
	if v.Type() != cty.String {
		return wantGot(`an RFC 3339 time (example: "1998-06-10T00:00:00Z")`, v)
	}
	tm, err := time.Parse(time.RFC3339, v.AsString())
	if err != nil {
		return fmt.Sprintf("%s is not an RFC 3339 time (example: \"1998-06-10T00:00:00Z\")", clip(v.AsString()))
	}
	t.V = tm
	return ""
}

// listAttr is a list of strings; Ranges holds each element's range.
type listAttr struct {
	attr
	V      []string
	Ranges []hcl.Range
}

func (l *listAttr) decode(v cty.Value, expr hcl.Expression) string {
	ty := v.Type()
	if !ty.IsTupleType() && !ty.IsListType() && !ty.IsSetType() {
		return wantGot(`a list of strings in brackets (example: ["a", "b"])`, v)
	}
	var elems []hclsyntax.Expression
	if t, ok := expr.(*hclsyntax.TupleConsExpr); ok && len(t.Exprs) == v.LengthInt() {
		elems = t.Exprs
	}
	var vals []string
	var ranges []hcl.Range
	for i, it := 0, v.ElementIterator(); it.Next(); i++ {
		_, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			return fmt.Sprintf("element %d: %s", i+1, wantGot("a string", e))
		}
		vals = append(vals, e.AsString())
		r := expr.Range()
		if elems != nil {
			r = elems[i].Range()
		}
		ranges = append(ranges, r)
	}
	l.V, l.Ranges = vals, ranges
	return ""
}

// wantGot is the hint for a value of the wrong type.
func wantGot(want string, v cty.Value) string {
	switch {
	case v.IsNull():
		return fmt.Sprintf("want %s, got null", want)
	case v.Type() == cty.String:
		s := v.AsString()
		if _, err := strconv.ParseFloat(s, 64); err == nil && strings.Contains(want, "number") {
			return fmt.Sprintf("want %s, got the string %s (write %s without quotes)", want, clip(s), s)
		}
		return fmt.Sprintf("want %s, got the string %s", want, clip(s))
	case v.Type() == cty.Number:
		return fmt.Sprintf("want %s, got the number %s", want, v.AsBigFloat().Text('g', 10))
	}
	return fmt.Sprintf("want %s, got a %s", want, v.Type().FriendlyName())
}

// decodeBody decodes body into n and reports every problem it finds. def is
// the range of the block's definition (type and labels), where missing
// attributes and blocks are reported; where describes the block in messages.
func decodeBody(body *hclsyntax.Body, def hcl.Range, where string, n node, ds *Diagnostics) {
	fields, kids := fieldsOf(n), n.children()
	for _, f := range fields {
		a := f.dst.base()
		a.Name, a.Range = f.name, def
	}

	attrs := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, a := range body.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].SrcRange.Start.Byte < attrs[j].SrcRange.Start.Byte })
	for _, a := range attrs {
		if f := findField(fields, a.Name); f != nil {
			decodeAttr(a, f.dst, ds)
			continue
		}
		hint := didYouMean(a.Name, fieldNames(fields))
		switch k := findChild(kids, a.Name); {
		case k != nil:
			hint = fmt.Sprintf("%s is a block, not an attribute (example: %s)", a.Name, k.example)
		case hint == "" && len(fields) > 0:
			hint = fmt.Sprintf("%s takes %s", where, quoteList(fieldNames(fields)))
		case hint == "":
			hint = fmt.Sprintf("%s takes no attributes", where)
		}
		ds.add(a.NameRange, fmt.Sprintf("Unknown key %s in %s", clip(a.Name), where), "%s", hint)
	}

	seen := map[string]hcl.Range{}
	for _, b := range body.Blocks {
		k := findChild(kids, b.Type)
		if k == nil {
			hint := didYouMean(b.Type, childTypes(kids))
			switch {
			case findField(fields, b.Type) != nil:
				hint = fmt.Sprintf("%s is an attribute, not a block (write %s = ...)", b.Type, b.Type)
			case hint == "" && len(kids) > 0:
				hint = fmt.Sprintf("%s takes blocks %s", where, quoteList(childTypes(kids)))
			case hint == "":
				hint = fmt.Sprintf("%s takes no blocks", where)
			}
			ds.add(b.TypeRange, fmt.Sprintf("Unknown block %s in %s", clip(b.Type), where), "%s", hint)
			continue
		}
		bdef := b.DefRange()
		if first, dup := seen[b.Type]; dup && k.once {
			ds.add(bdef, fmt.Sprintf("Duplicate %s block", b.Type), "only one is allowed; the first is at line %d", first.Start.Line)
			continue
		}
		if _, dup := seen[b.Type]; !dup {
			seen[b.Type] = bdef
		}
		l, ok := blockLabel(b, k, ds)
		if !ok {
			continue
		}
		desc := b.Type
		if k.label != "" {
			desc = fmt.Sprintf("%s %s", b.Type, clip(l.V))
		}
		decodeBody(b.Body, bdef, desc, k.open(bdef, l), ds)
	}
	for _, k := range kids {
		if _, ok := seen[k.typ]; !ok && k.required {
			ds.add(def, fmt.Sprintf("Missing %s block in %s", k.typ, where), "add one (example: %s)", k.example)
		}
	}
}

// decodeAttr evaluates a and decodes it into dst.
func decodeAttr(a *hclsyntax.Attribute, dst value, ds *Diagnostics) {
	b := dst.base()
	b.Set, b.Range = true, a.Expr.Range()
	if r, ok := repeats(a.Expr); ok {
		b.Bad = true
		ds.add(r, "Invalid "+a.Name, "for expressions and %{for} directives are not supported; write the value out")
		return
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		b.Bad = true
		ds.addHCL(diags, b.Range.Filename)
		return
	}
	if !v.IsWhollyKnown() {
		b.Bad = true
		ds.add(b.Range, "Invalid "+a.Name, "the value must be a constant")
		return
	}
	v, _ = v.Unmark()
	if v.IsNull() {
		b.Bad = true
		ds.add(b.Range, "Invalid "+a.Name, "null is not a value; leave %s out to use its default", a.Name)
		return
	}
	if hint := dst.decode(v, a.Expr); hint != "" {
		b.Bad = true
		ds.add(b.Range, "Invalid "+a.Name, "%s", hint)
	}
}

// repeats finds a for expression or a template %{for} directive in expr:
// three nested over a thousand-element list make a billion values, which
// exhausts memory in the evaluator. A config holds constants and needs
// neither. The walk recurses, within MaxNesting (checked before parsing).
func repeats(expr hclsyntax.Expression) (hcl.Range, bool) {
	var found *hcl.Range
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.ForExpr:
			if found == nil {
				r := n.Range()
				found = &r
			}
		case *hclsyntax.TemplateJoinExpr:
			if found == nil {
				r := n.Range()
				found = &r
			}
		}
		return nil
	})
	if found == nil {
		return hcl.Range{}, false
	}
	return *found, true
}

// blockLabel returns b's label as k wants it, or reports why it cannot.
func blockLabel(b *hclsyntax.Block, k *child, ds *Diagnostics) (label, bool) {
	want := 0
	if k.label != "" {
		want = 1
	}
	switch {
	case len(b.Labels) > want:
		r := b.LabelRanges[want]
		if want == 0 {
			ds.add(r, fmt.Sprintf("Extra label on %s block", b.Type), "%s takes no label (example: %s)", b.Type, k.example)
		} else {
			ds.add(r, fmt.Sprintf("Extra label on %s block", b.Type), "%s takes one label, its %s (example: %s)", b.Type, k.label, k.example)
		}
		return label{}, false
	case len(b.Labels) < want:
		ds.add(b.DefRange(), fmt.Sprintf("Missing %s of %s block", k.label, b.Type), "example: %s", k.example)
		return label{}, false
	case want == 0:
		return label{}, true
	case b.Labels[0] == "":
		ds.add(b.LabelRanges[0], fmt.Sprintf("Empty %s of %s block", k.label, b.Type), "example: %s", k.example)
		return label{}, false
	}
	return label{V: b.Labels[0], Range: b.LabelRanges[0]}, true
}

func findField(fs []field, name string) *field {
	for i := range fs {
		if fs[i].name == name {
			return &fs[i]
		}
	}
	return nil
}

func findChild(cs []child, typ string) *child {
	for i := range cs {
		if cs[i].typ == typ {
			return &cs[i]
		}
	}
	return nil
}

func fieldNames(fs []field) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

func childTypes(cs []child) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.typ
	}
	return names
}
