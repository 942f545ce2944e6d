// The API reference's rules that typedoc.json cannot say (issue 56), loaded by its `plugin`.
// 1. Each entry is named as it is imported: packages/core/src/otel.ts is `@payhook/core/otel`,
//    a package's src/index.ts its bare name; an entry that its package.json does not export fails.
// 2. The members of a value's own shape (an `as const` table's rows, a zod schema's fields, written
//    as object literals) need no comment each: the value's comment says what they are. Every member
//    of a declared type (interface, type alias, class) still needs one, as does every export.
// 3. A field of an object type written inline as a documented property's type (`live?: { intervalMs?:
//    number }`), a documented function's result, or a variant of a documented union type (`type
//    ClaimResult = { status: 'claimed'; … } | …`) is described by that comment; a method there
//    still needs its own.
import fs from 'node:fs';
import path from 'node:path';
import { Converter, ReflectionKind } from 'typedoc';
import ts from 'typescript';

/** The import specifier of an entry's source file, or an error naming what is wrong. */
function specifierOf(fileName) {
  const match = /^(.*)\/src\/(.+)\.ts$/.exec(fileName.replaceAll(path.sep, '/'));
  if (!match) return { error: `${fileName} is not a package's src/ file` };
  const pkg = JSON.parse(fs.readFileSync(path.join(match[1], 'package.json'), 'utf8'));
  const subpath = match[2] === 'index' ? '.' : `./${match[2]}`;
  if (!pkg.exports?.[subpath]) return { error: `${pkg.name}'s package.json exports no ${subpath} (${fileName})` };
  return { name: subpath === '.' ? pkg.name : `${pkg.name}/${match[2]}` };
}

/** Whether a symbol is only ever written as an object literal's property (a value's, not a type's). */
const isValueMember = (symbol) =>
  (symbol?.declarations?.length ?? 0) > 0 &&
  symbol.declarations.every((d) => ts.isPropertyAssignment(d) || ts.isShorthandPropertyAssignment(d) || ts.isMethodDeclaration(d));

/** @param {import('typedoc').Application} app */
export function load(app) {
  const valueMembers = new Set();

  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (reflection.kindOf(ReflectionKind.Property | ReflectionKind.Method) && reflection.parent?.kindOf(ReflectionKind.TypeLiteral)) {
      if (isValueMember(context.getSymbolFromReflection(reflection))) valueMembers.add(reflection);
    }
  });

  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const mod of context.project.getChildrenByKind(ReflectionKind.Module)) {
      const fileName = context.project.getSymbolIdFromReflection(mod)?.fileName;
      const found = fileName ? specifierOf(fileName) : { error: `no source file for the module ${mod.name}` };
      if (found.error) app.logger.error(found.error);
      else mod.name = found.name;
    }
  });

  /** Whether `literal` is one of the object types a union is made of. */
  const isVariant = (type, literal) =>
    type?.type === 'union' && type.types.some((t) => t.type === 'reflection' && t.declaration === literal);

  /** Whether a reflection is a field of an inline object type whose holder (a property, a function, a union type) says what it is. */
  const describedByHolder = (r) => {
    if (!r.kindOf(ReflectionKind.Property) || !r.parent?.kindOf(ReflectionKind.TypeLiteral)) return false;
    let returned = false; // whether the walk passed a signature: a field of what a function returns
    for (let holder = r.parent, literal = r.parent; holder; literal = holder, holder = holder.parent) {
      if (holder.kindOf(ReflectionKind.TypeLiteral)) continue;
      if (holder.kindOf(ReflectionKind.TypeAlias) && holder.hasComment()) return returned || isVariant(holder.type, literal);
      returned ||= holder.kindOf(ReflectionKind.SomeSignature);
      if (!holder.kindOf(ReflectionKind.Property | ReflectionKind.SomeSignature | ReflectionKind.FunctionOrMethod)) return false;
      if (holder.hasComment()) return true;
      if (holder.kindOf(ReflectionKind.Property)) return describedByHolder(holder);
    }
    return false;
  };

  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const r of Object.values(context.project.reflections)) if (describedByHolder(r)) valueMembers.add(r);
    // Under a parameter nothing is checked, and a name listed but never checked is itself a warning.
    const underParameter = (r) => r.parent && (r.parent.kindOf(ReflectionKind.Parameter) || underParameter(r.parent));
    const names = [...valueMembers].filter((r) => !r.hasComment() && !underParameter(r)).map((r) => r.getFriendlyFullName());
    app.options.setValue('intentionallyNotDocumented', [...app.options.getValue('intentionallyNotDocumented'), ...new Set(names)]);
  });
}
