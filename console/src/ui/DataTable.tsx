import type { ReactNode } from "react";
import { Link } from "./Link.tsx";

/** One column: its header text and how a row fills its cell. */
export interface Column<Row> {
  header: string;
  cell: (row: Row, index: number) => ReactNode;
  /** React key of the column; the header when unset. */
  key?: string;
  /** On every body cell of the column. */
  className?: string;
  /** The cell names its row (`<th scope="row">`): screen readers announce it with every other cell of the row. */
  rowHeader?: boolean;
}

export interface DataTableProps<Row> {
  /** The table's accessible name, shown above it. */
  caption: string;
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  rowClassName?: (row: Row) => string | undefined;
  /**
   * Where a row leads: its row-header cell (else its first) becomes a real link, so the row is
   * reached by Tab, opened by Enter, and can be middle-clicked or copied. The row itself stays a
   * plain row (WAI-ARIA's table pattern has no interactive rows), so there is one tab stop per row.
   */
  rowLink?: (row: Row) => string;
  /** Shown instead of the table when there are no rows; unset, the table is shown with its headers only. */
  empty?: string;
  className?: string;
}

/** The console's tables: headers in `<th scope="col">`, a caption naming the table, states in words. */
export function DataTable<Row>({ caption, columns, rows, rowKey, rowClassName, rowLink, empty, className }: DataTableProps<Row>) {
  if (rows.length === 0 && empty !== undefined) return <p>{empty}</p>;
  const linked = rowLink ? Math.max(0, columns.findIndex((c) => c.rowHeader)) : -1;
  return (
    <table className={className}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.key ?? c.header} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          <tr key={rowKey(row)} className={rowClassName?.(row)}>
            {columns.map((c, at) => {
              const content = c.cell(row, index);
              const body = at === linked && rowLink ? <Link to={rowLink(row)}>{content}</Link> : content;
              return c.rowHeader ? (
                <th key={c.key ?? c.header} scope="row" className={c.className}>
                  {body}
                </th>
              ) : (
                <td key={c.key ?? c.header} className={c.className}>
                  {body}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
