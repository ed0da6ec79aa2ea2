/**
 * The size rule of `src/`: no file over 400 lines, no function over 80. A function's length is its
 * own: the lines of the functions written inside it are theirs, so a service body that only
 * declares its methods is as long as its own statements, and each method is measured by itself.
 */
import ts from "typescript"

export const maxFileLines = 400
export const maxFunctionLines = 80

export interface Oversized {
  readonly file: string
  readonly line: number
  readonly name: string
  readonly lines: number
}

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node) || ts.isConstructorDeclaration(node)

/** What a reader would call the function: its declared name, or the name it is assigned to or passed under. */
const nameOf = (node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string => {
  if (node.name) return node.name.getText(source)
  let parent: ts.Node = node.parent
  while (ts.isCallExpression(parent) || ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent)) {
    if (ts.isCallExpression(parent) && ts.isStringLiteral(parent.arguments[0] ?? parent)) {
      return (parent.arguments[0] as ts.StringLiteral).text
    }
    parent = parent.parent
  }
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source)
  }
  return "(anonymous)"
}

const lineOf = (source: ts.SourceFile, position: number) => source.getLineAndCharacterOfPosition(position).line

/** The functions of one file whose own length passes the limit. */
export const oversizedFunctions = (file: string, text: string, limit = maxFunctionLines): Array<Oversized> => {
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)
  const found: Array<Oversized> = []
  /** Walks `node`, returning the lines the functions directly inside it span. */
  const visit = (node: ts.Node): number => {
    let nested = 0
    ts.forEachChild(node, (child) => {
      if (isFunction(child)) {
        const span = lineOf(source, child.getEnd()) - lineOf(source, child.getStart(source)) + 1
        const own = span - visit(child)
        if (own > limit) found.push({ file, line: lineOf(source, child.getStart(source)) + 1, name: nameOf(child, source), lines: own })
        nested += span
      } else {
        nested += visit(child)
      }
    })
    return nested
  }
  visit(source)
  return found
}

export const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
