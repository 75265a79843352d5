// A form generated from a tool's input schema (JSON Schema 2020-12, as lynxc publishes it:
// string, integer, number, boolean, enum, const, array, object, anyOf with null, bounds,
// defaults, descriptions), and the schema's own validation shown on it before sending.
//
// renderForm(schema, container, options) -> form with .read() (the arguments object, or
// undefined members left out), .set(values) (keeps what fits), .showProblems(errors) and
// .fields (by JSON pointer). Every value is put in the DOM as text, never as HTML.

import { Validator } from "./vendor/json-schema/index.js";

const MAX_TEXT = 4000; // descriptions and other schema text shown at most this long
// Empty items an array's minItems adds, over the whole form: nested arrays multiply (20 at each
// of 4 levels would be 160,000 fields), so past this a person adds the rest by hand.
const MAX_PREFILLED_FIELDS = 1000;
let counter = 0;

// An element with its attributes and children; "text" is set as text, never parsed as HTML.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function add(node, ...children) {
  for (const child of children) if (child) node.append(child);
  return node;
}

export function clip(text, limit = MAX_TEXT) {
  const value = String(text);
  return value.length > limit ? `${value.slice(0, limit)}… (${value.length - limit} more characters)` : value;
}

function pointer(base, key) {
  return `${base}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// The schema without a null alternative: {schema, nullable}.
export function unwrapNullable(schema) {
  if (!isObject(schema)) return { schema: {}, nullable: false };
  if (Array.isArray(schema.type) && schema.type.includes("null")) {
    const rest = schema.type.filter((t) => t !== "null");
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  if (Array.isArray(schema.anyOf)) {
    const others = schema.anyOf.filter((s) => !(isObject(s) && s.type === "null"));
    if (others.length < schema.anyOf.length && others.length === 1 && isObject(others[0])) {
      const { anyOf, ...outer } = schema;
      return { schema: { ...others[0], ...outer }, nullable: true };
    }
  }
  return { schema, nullable: false };
}

function kindOf(schema) {
  if (!isObject(schema)) return "json";
  if ("const" in schema) return "const";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  if (schema.allOf || schema.$ref || schema.not || schema.if) return "json";
  const alternatives = schema.anyOf || schema.oneOf;
  if (alternatives) {
    const usable = Array.isArray(alternatives) && alternatives.length > 1 && alternatives.every(isObject);
    return usable && !(schema.anyOf && schema.oneOf) ? "union" : "json";
  }
  const type = schema.type;
  if (type === "string") return "string";
  if (type === "integer" || type === "number") return "number";
  if (type === "boolean") return "boolean";
  if (type === "array") {
    if (schema.prefixItems || Array.isArray(schema.items)) return "json";
    return "array";
  }
  if (type === "object") {
    if (isObject(schema.properties) && Object.keys(schema.properties).length) return "object";
    if (schema.additionalProperties === false) return "object"; // no member at all
    const values = schema.additionalProperties;
    if (isObject(values) && !isObject(schema.patternProperties) && kindOf(unwrapNullable(values).schema) !== "json") {
      return "map"; // {name: value, ...}: rows of a key and a value
    }
    return "json";
  }
  return "json";
}

// The bounds a person should see before typing, as short phrases.
function hints(schema) {
  const out = [];
  const range = (lo, hi, unit) => {
    if (lo !== undefined && hi !== undefined) out.push(`${lo}–${hi}${unit}`);
    else if (lo !== undefined) out.push(`at least ${lo}${unit}`);
    else if (hi !== undefined) out.push(`at most ${hi}${unit}`);
  };
  range(schema.minimum, schema.maximum, "");
  if (schema.exclusiveMinimum !== undefined) out.push(`more than ${schema.exclusiveMinimum}`);
  if (schema.exclusiveMaximum !== undefined) out.push(`less than ${schema.exclusiveMaximum}`);
  const plural = (word, n) => (n === 1 ? word : `${word}s`);
  range(schema.minLength, schema.maxLength, ` ${plural("character", schema.maxLength ?? schema.minLength)}`);
  range(schema.minItems, schema.maxItems, ` ${plural("item", schema.maxItems ?? schema.minItems)}`);
  if (schema.pattern) out.push(`matches ${clip(schema.pattern, 200)}`);
  if (schema.format) out.push(`format ${clip(schema.format, 100)}`);
  if (schema.default !== undefined) out.push(`default ${clip(JSON.stringify(schema.default), 200)}`);
  if (Array.isArray(schema.examples) && schema.examples.length) {
    out.push(`e.g. ${clip(schema.examples.slice(0, 3).map((e) => JSON.stringify(e)).join(", "), 300)}`);
  }
  return out;
}

function jsonText(value) {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

// One field of the form. Subclasses: get() (undefined: left out), set(value) (true: it fit).
class Field {
  constructor(form, path, schema, label, { required = false, nullable = false, item = false } = {}) {
    this.form = form;
    this.item = item; // an array's item: present by being there, no "(required)" marker
    this.path = path;
    this.schema = schema;
    this.label = label;
    this.required = required;
    this.nullable = nullable;
    this.id = `${form.idPrefix}-${++counter}`;
    this.errorId = `${this.id}-error`;
    this.helpId = `${this.id}-help`;
    form.fields.set(path, this);
  }

  labelNode(forId) {
    const label = el("label", { for: forId, className: "field-label" }, document.createTextNode(this.label));
    if (this.required && !this.item) label.append(el("span", { className: "required", text: " (required)" }));
    return label;
  }

  // A fieldset headed by the field's label and help (objects, arrays, unions, maps).
  fieldsetNode(kind) {
    const legend = el("legend", {}, document.createTextNode(this.label));
    if (this.required && !this.item) legend.append(el("span", { className: "required", text: " (required)" }));
    return add(el("fieldset", { className: `field field-${kind}` }), legend, this.helpNode());
  }

  // An array's or a map's frame: the fieldset, its null switch, the list of rows and the Add
  // button, which runs onAdd() (adds a row and focuses it).
  listFrame(kind, addText, onAdd) {
    this.node = this.fieldsetNode(kind);
    const sw = this.nullSwitch((on) => {
      this.list.hidden = on;
      this.addButton.hidden = on;
    });
    if (sw) this.node.append(sw);
    this.list = el("ol", { className: "items" });
    this.addButton = el("button", { type: "button", className: "add", text: addText });
    this.addButton.addEventListener("click", () => {
      onAdd();
      this.form.changed();
    });
    this.node.append(this.list, this.addButton, this.errorNode());
  }

  helpNode() {
    const parts = [];
    if (this.schema.description) parts.push(clip(this.schema.description));
    const bounds = hints(this.schema);
    if (bounds.length) parts.push(bounds.join("; "));
    if (!parts.length) return null;
    this.hasHelp = true;
    const help = el("div", { id: this.helpId, className: "help" });
    for (const part of parts) help.append(el("p", { text: part }));
    return help;
  }

  errorNode() {
    return el("p", { id: this.errorId, className: "field-error", hidden: true });
  }

  describe(input) {
    const ids = [];
    if (this.hasHelp) ids.push(this.helpId);
    if (this.showingError) ids.push(this.errorId);
    if (ids.length) input.setAttribute("aria-describedby", ids.join(" "));
    else input.removeAttribute("aria-describedby");
  }

  focusTarget() {
    return this.input || this.node.querySelector("input, select, textarea, button");
  }

  setError(messages) {
    const node = this.node.querySelector(`#${CSS.escape(this.errorId)}`);
    const target = this.focusTarget();
    this.showingError = messages.length > 0;
    if (node) {
      node.textContent = messages.join(" ");
      node.hidden = !this.showingError;
    }
    if (target) {
      if (this.showingError) target.setAttribute("aria-invalid", "true");
      else target.removeAttribute("aria-invalid");
      this.describe(target);
    }
  }

  // A "null" switch for a nullable field: when checked, the value is null.
  nullSwitch(onChange) {
    if (!this.nullable) return null;
    // Named with its field ("note: null"): every nullable field has one of these.
    this.nullBox = el("input", { type: "checkbox", id: `${this.id}-null`, "aria-label": `${this.label}: null` });
    this.nullBox.addEventListener("change", () => {
      onChange(this.nullBox.checked);
      this.form.changed();
    });
    return el("label", { className: "null-switch", for: `${this.id}-null` }, this.nullBox, document.createTextNode(" null"));
  }

  isNull() {
    return Boolean(this.nullBox && this.nullBox.checked);
  }

  setNull(value) {
    if (this.nullBox) {
      this.nullBox.checked = value;
      this.nullBox.dispatchEvent(new Event("change"));
    }
  }
}

class ScalarField extends Field {
  constructor(form, path, schema, label, options, kind) {
    super(form, path, schema, label, options);
    this.kind = kind;
    this.node = el("div", { className: `field field-${kind}` });
    this.input = this.makeInput();
    this.input.id = this.id;
    if (this.required) this.input.setAttribute("aria-required", "true");
    const row = el("div", { className: "input-row" }, this.input, this.nullSwitch((on) => (this.input.disabled = on)));
    add(this.node, this.labelNode(this.id), row, this.helpNode(), this.errorNode());
    this.describe(this.input);
    this.input.addEventListener("input", () => form.changed());
    this.input.addEventListener("change", () => form.changed());
    if (schema.default !== undefined) this.set(schema.default);
  }

  makeInput() {
    const s = this.schema;
    if (this.kind === "enum" || this.kind === "boolean-select") {
      const select = el("select");
      const values = this.kind === "enum" ? s.enum : [true, false];
      if (!this.required || s.default === undefined) select.append(el("option", { value: "", text: "(not set)" }));
      values.forEach((value, i) => {
        select.append(el("option", { value: String(i), text: clip(typeof value === "string" ? value : JSON.stringify(value), 200) }));
      });
      this.values = values;
      return select;
    }
    if (this.kind === "boolean") return el("input", { type: "checkbox" });
    if (this.kind === "number") {
      return el("input", {
        type: "number",
        inputmode: s.type === "integer" ? "numeric" : "decimal",
        step: s.type === "integer" ? "1" : "any",
        min: s.minimum,
        max: s.maximum,
      });
    }
    if (this.kind === "const") {
      return el("input", { type: "text", readonly: true, value: clip(JSON.stringify(s.const), 500) });
    }
    const long = s.maxLength === undefined || s.maxLength > 200;
    if (long && !s.format && !s.pattern) return el("textarea", { rows: "3", spellcheck: "false" });
    const types = { date: "date", email: "email", uri: "url" };
    return el("input", { type: types[s.format] || "text", spellcheck: "false", autocomplete: "off" });
  }

  get() {
    if (this.isNull()) return null;
    const input = this.input;
    switch (this.kind) {
      case "const":
        return this.schema.const;
      case "enum":
      case "boolean-select":
        return input.value === "" ? undefined : this.values[Number(input.value)];
      case "boolean":
        return input.checked;
      case "number":
        if (input.validity && input.validity.badInput) return { __bad: input.value || "not a number" };
        return input.value === "" ? undefined : Number(input.value);
      default:
        return input.value === "" && !this.required ? undefined : input.value;
    }
  }

  set(value, strict = false) {
    if (strict && !fits(this.schema, this.nullable, value)) return false;
    if (value === null) {
      if (!this.nullable) return false;
      this.setNull(true);
      return true;
    }
    if (this.nullBox && this.nullBox.checked) this.setNull(false);
    const input = this.input;
    switch (this.kind) {
      case "const":
        return value === this.schema.const;
      case "enum":
      case "boolean-select": {
        const index = this.values.findIndex((v) => JSON.stringify(v) === JSON.stringify(value));
        if (index < 0) return false;
        input.value = String(index);
        return true;
      }
      case "boolean":
        if (typeof value !== "boolean") return false;
        input.checked = value;
        return true;
      case "number":
        if (typeof value !== "number") return false;
        input.value = String(value);
        return true;
      default:
        if (typeof value !== "string") return false;
        input.value = value;
        return true;
    }
  }
}

// Any schema the form cannot express: its value as JSON text.
class JsonField extends Field {
  constructor(form, path, schema, label, options) {
    super(form, path, schema, label, options);
    this.node = el("div", { className: "field field-json" });
    this.input = el("textarea", { id: this.id, rows: "4", spellcheck: "false", className: "json" });
    if (this.required) this.input.setAttribute("aria-required", "true");
    const note = el("p", { className: "help", text: "As JSON." });
    add(this.node, this.labelNode(this.id), this.input, note, this.helpNode(), this.errorNode());
    this.describe(this.input);
    this.input.addEventListener("input", () => form.changed());
    if (schema.default !== undefined) this.set(schema.default);
  }

  get() {
    const text = this.input.value.trim();
    if (text === "") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return { __bad: "not valid JSON" };
    }
  }

  set(value, strict = false) {
    if (strict && !fits(this.schema, this.nullable, value)) return false;
    this.input.value = jsonText(value);
    return true;
  }
}

class ObjectField extends Field {
  constructor(form, path, schema, label, options, { root = false } = {}) {
    super(form, path, schema, label, options);
    this.root = root;
    this.children = new Map();
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    this.node = root ? el("div", { className: "object-root" }) : this.fieldsetNode("object");
    if (!root) {
      const sw = this.nullSwitch((on) => (this.body.hidden = on));
      if (sw) this.node.append(sw);
    }
    this.body = el("div", { className: "object-body" });
    this.node.append(this.body);
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const [key, sub] of Object.entries(properties)) {
      const child = buildField(form, pointer(path, key), sub, key, { required: required.has(key) });
      this.children.set(key, child);
      this.body.append(child.node);
    }
    if (!root) this.node.append(this.errorNode());
    if (root && !this.children.size) this.body.append(el("p", { className: "muted", text: "This tool takes no arguments." }));
    if (!root && (isObject(schema.default) || schema.default === null)) this.set(schema.default);
  }

  focusTarget() {
    return this.root ? null : this.node.querySelector("input, select, textarea, button");
  }

  setError(messages) {
    if (this.root) {
      this.form.rootMessages = messages;
      return;
    }
    super.setError(messages);
  }

  get() {
    if (this.isNull()) return null;
    const value = {};
    for (const [key, child] of this.children) {
      const v = child.get();
      if (v !== undefined) value[key] = v;
    }
    if (!this.root && !this.required && Object.keys(value).length === 0) return undefined;
    return value;
  }

  set(value, strict = false) {
    if (value === null) {
      if (!this.nullable) return false;
      this.setNull(true);
      return true;
    }
    if (!isObject(value)) return false;
    if (this.nullBox && this.nullBox.checked) this.setNull(false);
    for (const [key, child] of this.children) {
      if (key in value) child.set(value[key], strict);
    }
    return true;
  }
}

class ArrayField extends Field {
  constructor(form, path, schema, label, options) {
    super(form, path, schema, label, options);
    this.items = [];
    this.listFrame("array", `Add item to ${label}`, () => {
      const item = this.add();
      const target = item.field.focusTarget && item.field.focusTarget();
      if (target) target.focus();
    });
    if (Array.isArray(schema.default) || schema.default === null) this.set(schema.default);
    else {
      const wanted = Math.min(schema.minItems || 0, 20);
      for (let i = 0; i < wanted && form.prefilled < MAX_PREFILLED_FIELDS; i++) {
        form.prefilled += 1;
        this.add();
      }
    }
  }

  focusTarget() {
    return this.node.querySelector("input, select, textarea, button");
  }

  itemSchema() {
    return isObject(this.schema.items) ? this.schema.items : {};
  }

  add(value) {
    const index = this.items.length;
    const field = buildField(this.form, pointer(this.path, index), this.itemSchema(), `${this.label} item ${index + 1}`, {
      required: true,
      item: true,
    });
    const remove = el("button", { type: "button", className: "remove", text: `Remove ${this.label} item ${index + 1}` });
    const li = el("li", {}, field.node, remove);
    const item = { field, li };
    remove.addEventListener("click", () => {
      const values = this.items.filter((other) => other !== item).map((other) => other.field.get());
      this.set(values);
      this.addButton.focus();
      this.form.changed();
    });
    this.items.push(item);
    this.list.append(li);
    if (value !== undefined) field.set(value);
    return item;
  }

  clear() {
    for (const item of this.items) {
      this.form.forget(item.field);
      item.li.remove();
    }
    this.items = [];
  }

  get() {
    if (this.isNull()) return null;
    const values = this.items.map((item) => item.field.get()).map((v) => (v === undefined ? null : v));
    return values.length || this.required ? values : undefined;
  }

  set(value, strict = false) {
    if (value === null) {
      if (!this.nullable) return false;
      this.setNull(true);
      return true;
    }
    if (!Array.isArray(value)) return false;
    if (strict && !fits(this.schema, this.nullable, value)) return false;
    if (this.nullBox && this.nullBox.checked) this.setNull(false);
    this.clear();
    for (const item of value.slice(0, 500)) this.add(item);
    return true;
  }
}

// A short name for a schema, for the choice among a union's alternatives.
function describeSchema(schema) {
  if (!isObject(schema)) return "any JSON";
  if ("const" in schema) return clip(JSON.stringify(schema.const), 60);
  if (Array.isArray(schema.enum)) return `one of ${clip(schema.enum.map((v) => JSON.stringify(v)).join(", "), 80)}`;
  const names = { string: "text", integer: "integer", number: "number", boolean: "true or false", null: "null", object: "object" };
  if (schema.type === "array") return `list of ${isObject(schema.items) ? describeSchema(schema.items) : "values"}`;
  if (typeof schema.type === "string") return names[schema.type] || schema.type;
  return clip(schema.title || "JSON value", 60);
}

// anyOf/oneOf of several alternatives: the person picks which, and fills that alternative's field.
class UnionField extends Field {
  constructor(form, path, schema, label, options) {
    super(form, path, schema, label, options);
    this.alternatives = schema.anyOf || schema.oneOf;
    this.node = this.fieldsetNode("union");
    this.choice = el("select", { id: `${this.id}-as` });
    if (!this.required) this.choice.append(el("option", { value: "", text: "(not set)" }));
    this.alternatives.forEach((alternative, i) => {
      this.choice.append(el("option", { value: String(i), text: describeSchema(alternative) }));
    });
    this.choice.addEventListener("change", () => {
      this.choose(this.choice.value);
      form.changed();
    });
    this.slot = el("div", { className: "union-value" });
    const chooser = el("div", { className: "field" }, el("label", { for: `${this.id}-as`, text: `${label}: send as` }), this.choice);
    this.node.append(chooser, this.slot, this.errorNode());
    this.inner = null;
    if (schema.default !== undefined) this.set(schema.default);
    else if (this.required) this.choose("0");
  }

  focusTarget() {
    return this.choice;
  }

  choose(value) {
    if (this.inner) this.form.forget(this.inner);
    this.form.fields.set(this.path, this);
    this.inner = null;
    this.slot.replaceChildren();
    this.choice.value = value;
    if (value === "") return;
    const alternative = this.alternatives[Number(value)];
    if (isObject(alternative) && alternative.type === "null") return;
    this.inner = buildField(this.form, this.path, alternative, `${this.label} value`, { required: true, item: true });
    this.slot.append(this.inner.node);
  }

  get() {
    if (this.choice.value === "") return undefined;
    const alternative = this.alternatives[Number(this.choice.value)];
    if (isObject(alternative) && alternative.type === "null") return null;
    return this.inner ? this.inner.get() : undefined;
  }

  set(value) {
    const index = this.alternatives.findIndex((alternative) => fits(alternative, false, value));
    if (index < 0) return false;
    this.choose(String(index));
    if (this.inner) this.inner.set(value);
    return true;
  }
}

// An object of free names (additionalProperties: a schema): rows of a name and a value.
class MapField extends Field {
  constructor(form, path, schema, label, options) {
    super(form, path, schema, label, options);
    this.rows = [];
    this.listFrame("map", `Add entry to ${label}`, () => this.add().key.focus());
    if (isObject(schema.default) || schema.default === null) this.set(schema.default);
  }

  focusTarget() {
    return this.node.querySelector("input, select, textarea, button");
  }

  add(name = "", value) {
    const n = this.rows.length + 1;
    const keyId = `${this.id}-key-${n}`;
    const key = el("input", { type: "text", id: keyId, spellcheck: "false", autocomplete: "off" });
    key.value = name;
    key.addEventListener("input", () => this.form.changed());
    const keyField = el("div", { className: "field" }, el("label", { for: keyId, className: "field-label", text: `${this.label} entry ${n} name` }), key);
    // The value's field sits under a path no problem names: problems inside show on the map.
    const field = buildField(this.form, `${this.path}/#${n}`, this.schema.additionalProperties, `${this.label} entry ${n} value`, {
      required: true,
      item: true,
    });
    const remove = el("button", { type: "button", className: "remove", text: `Remove ${this.label} entry ${n}` });
    const li = el("li", {}, keyField, field.node, remove);
    const row = { key, field, li };
    remove.addEventListener("click", () => {
      const kept = Object.fromEntries(this.rows.filter((other) => other !== row).map((other) => [other.key.value, other.field.get()]));
      this.set(kept);
      this.addButton.focus();
      this.form.changed();
    });
    this.rows.push(row);
    this.list.append(li);
    if (value !== undefined) field.set(value);
    return row;
  }

  get() {
    if (this.isNull()) return null;
    const value = {};
    for (const row of this.rows) {
      if (row.key.value === "") continue;
      const v = row.field.get();
      value[row.key.value] = v === undefined ? null : v;
    }
    return Object.keys(value).length || this.required ? value : undefined;
  }

  set(value, strict = false) {
    if (value === null) {
      if (!this.nullable) return false;
      this.setNull(true);
      return true;
    }
    if (!isObject(value)) return false;
    if (strict && !fits(this.schema, this.nullable, value)) return false;
    if (this.nullBox && this.nullBox.checked) this.setNull(false);
    for (const row of this.rows) {
      this.form.forget(row.field);
      row.li.remove();
    }
    this.rows = [];
    for (const [name, item] of Object.entries(value).slice(0, 500)) this.add(name, item);
    return true;
  }
}

function buildField(form, path, rawSchema, label, { required = false, item = false } = {}) {
  const { schema, nullable } = unwrapNullable(rawSchema === true ? {} : rawSchema);
  const options = { required, nullable, item };
  const kind = kindOf(schema);
  if (kind === "object") return new ObjectField(form, path, schema, label, options);
  if (kind === "array") return new ArrayField(form, path, schema, label, options);
  if (kind === "json") return new JsonField(form, path, schema, label, options);
  if (kind === "union") return new UnionField(form, path, rawSchema, label, { required, item });
  if (kind === "map") return new MapField(form, path, schema, label, options);
  if (kind === "boolean" && !required && schema.default === undefined) {
    return new ScalarField(form, path, schema, label, options, "boolean-select");
  }
  return new ScalarField(form, path, schema, label, options, kind);
}

// Whether `value` is valid for a field's own schema (after a rebuild, only such values are kept).
function fits(schema, nullable, value) {
  if (value === null && nullable) return true;
  try {
    return new Validator(schema, "2020-12", true).validate(value).valid;
  } catch {
    return false;
  }
}

// Whether the form can express this schema at its top (an object); else raw JSON only.
export function formCanExpress(schema) {
  return isObject(schema) && kindOf(unwrapNullable(schema).schema) === "object";
}

// --- validation -------------------------------------------------------------------------------

function resolvePointer(root, location) {
  // keywordLocation "#/properties/a/anyOf/0/type" -> the schema object holding the keyword
  const parts = location.replace(/^#/, "").split("/").slice(1, -1);
  let node = root;
  for (const raw of parts) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === undefined || node === null) return undefined;
    node = node[part];
  }
  return node;
}

const AGGREGATE = new Set(["properties", "items", "prefixItems", "allOf", "anyOf", "oneOf", "$ref", "additionalItems", "unevaluatedItems", "unevaluatedProperties", "dependentSchemas", "contains", "not", "if", "then", "else", "$recursiveRef"]);

function friendly(error, schema) {
  const at = resolvePointer(schema, error.keywordLocation) || {};
  const show = (v) => clip(JSON.stringify(v), 120);
  switch (error.keyword) {
    case "minimum":
      return `Must be at least ${at.minimum}.`;
    case "maximum":
      return `Must be at most ${at.maximum}.`;
    case "exclusiveMinimum":
      return `Must be more than ${at.exclusiveMinimum}.`;
    case "exclusiveMaximum":
      return `Must be less than ${at.exclusiveMaximum}.`;
    case "minLength":
      return at.minLength === 1 ? "Must not be empty." : `Must be at least ${at.minLength} characters long.`;
    case "maxLength":
      return `Must be at most ${at.maxLength} character${at.maxLength === 1 ? "" : "s"} long.`;
    case "minItems":
      return `Needs at least ${at.minItems} item${at.minItems === 1 ? "" : "s"}.`;
    case "maxItems":
      return `Takes at most ${at.maxItems} item${at.maxItems === 1 ? "" : "s"}.`;
    case "pattern":
      return `Must match the pattern ${clip(at.pattern, 200)}.`;
    case "enum":
      return `Must be one of ${clip(at.enum.map((v) => JSON.stringify(v)).join(", "), 300)}.`;
    case "const":
      return `Must be ${show(at.const)}.`;
    case "type":
      return `Must be of type ${Array.isArray(at.type) ? at.type.join(" or ") : at.type}.`;
    case "required":
      return "Required.";
    case "additionalProperties":
      return "Not a property this tool takes.";
    case "multipleOf":
      return `Must be a multiple of ${at.multipleOf}.`;
    case "uniqueItems":
      return "Items must all differ.";
    case "format":
      return `Must be a valid ${clip(at.format, 60)}.`;
    default:
      return clip(error.error, 300);
  }
}

// The validator's findings -> [{location, message}], one per leaf problem: the aggregate keywords'
// "a subschema had errors" are dropped, as are the findings of a nullable field's null branch.
export function problemsOf(errors, schema) {
  const out = [];
  const seen = new Set();
  for (const error of errors) {
    if (AGGREGATE.has(error.keyword)) continue;
    const holder = resolvePointer(schema, error.keywordLocation);
    if (error.keyword === "type" && holder && holder.type === "null" && /\/anyOf\/\d+\/type$/.test(error.keywordLocation)) {
      continue;
    }
    let location = error.instanceLocation.replace(/^#/, "");
    if (error.keyword === "required") {
      const match = /"([^"]*)"/.exec(error.error);
      if (match) location = pointer(location, match[1]);
    }
    if (error.keyword === "additionalProperties" || error.keyword === "propertyNames") {
      const match = /"([^"]*)"/.exec(error.error);
      if (match) location = pointer(location, match[1]);
    }
    const message = friendly(error, schema);
    const key = `${location}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ location, message });
  }
  return out;
}

// Finds values the form could not even read (a number input holding text, JSON that does not
// parse), then validates the rest against the schema.
export function validate(schema, value) {
  const bad = [];
  const clean = (v, location) => {
    if (isObject(v) && "__bad" in v && Object.keys(v).length === 1) {
      bad.push({ location, message: v.__bad === "not valid JSON" ? "Not valid JSON." : "Not a number." });
      return undefined;
    }
    if (Array.isArray(v)) return v.map((item, i) => clean(item, pointer(location, i)));
    if (isObject(v)) {
      const out = {};
      for (const [k, item] of Object.entries(v)) {
        const c = clean(item, pointer(location, k));
        if (c !== undefined) out[k] = c;
      }
      return out;
    }
    return v;
  };
  const cleaned = clean(value, "");
  if (bad.length) return { value: cleaned, problems: bad };
  let result;
  try {
    result = new Validator(isObject(schema) ? schema : {}, "2020-12", false).validate(cleaned);
  } catch (err) {
    return { value: cleaned, problems: [{ location: "", message: `The schema could not be checked: ${err.message}` }] };
  }
  return { value: cleaned, problems: result.valid ? [] : problemsOf(result.errors, schema) };
}

// --- the form ---------------------------------------------------------------------------------

export function renderForm(schema, container, { idPrefix = "arg" } = {}) {
  const form = {
    idPrefix,
    fields: new Map(),
    prefilled: 0, // items added for minItems (MAX_PREFILLED_FIELDS)
    rootMessages: [],
    onChange: null,
    changed() {
      if (this.onChange) this.onChange();
    },
    forget(field) {
      for (const path of [...this.fields.keys()]) {
        if (path === field.path || path.startsWith(`${field.path}/`)) this.fields.delete(path);
      }
    },
  };
  container.replaceChildren();
  const root = new ObjectField(form, "", isObject(schema) ? schema : {}, "arguments", { required: true }, { root: true });
  container.append(root.node);
  form.root = root;
  form.read = () => root.get();
  form.set = (values, { strict = false } = {}) => root.set(values, strict);
  form.check = () => validate(schema, root.get());
  form.showProblems = (problems) => {
    const byField = new Map();
    const unplaced = [];
    for (const problem of problems) {
      let field = form.fields.get(problem.location);
      // A problem inside a JSON field (or a member the form does not show): its nearest field.
      let location = problem.location;
      while (!field && location) {
        location = location.slice(0, location.lastIndexOf("/"));
        field = form.fields.get(location);
      }
      if (!field || field === root) {
        unplaced.push(problem);
        continue;
      }
      if (!byField.has(field)) byField.set(field, []);
      byField.get(field).push(problem.message);
    }
    for (const field of form.fields.values()) field.setError(byField.get(field) || []);
    return { byField, unplaced };
  };
  return form;
}
