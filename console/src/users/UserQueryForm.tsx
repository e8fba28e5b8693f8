import { useEffect, useState, type FormEvent } from "react";
import { PAGE_SIZES, SORT_FIELDS, type ListState, type SortField } from "./listQuery.ts";

/**
 * Search, one filter, sort and page size; applied together on submit (Enter in any field). The
 * form stays mounted (focus stays where it was) and follows the address when it changes (back).
 */
export function UserQueryForm({ value, valueKey, onApply }: { value: ListState; valueKey: string; onApply: (next: ListState) => void }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [valueKey]);
  const set = <K extends keyof ListState>(key: K, v: ListState[K]) => setDraft((d) => ({ ...d, [key]: v }));

  function submit(event: FormEvent) {
    event.preventDefault();
    onApply({ ...draft, offset: 0 });
  }
  function reset() {
    const cleared: ListState = { ...draft, searchValue: "", filterField: "", filterValue: "", offset: 0 };
    setDraft(cleared);
    onApply(cleared);
  }

  return (
    <form className="query" onSubmit={submit} role="search" aria-label="Find users">
      <fieldset>
        <legend>Search</legend>
        <label htmlFor="search-value">Search for</label>
        <input id="search-value" type="search" value={draft.searchValue} onChange={(e) => set("searchValue", e.target.value)} />
        <label htmlFor="search-field">in</label>
        <select id="search-field" value={draft.searchField} onChange={(e) => set("searchField", e.target.value as ListState["searchField"])}>
          <option value="email">Email</option>
          <option value="name">Name</option>
        </select>
        <label htmlFor="search-operator">matching</label>
        <select
          id="search-operator"
          value={draft.searchOperator}
          onChange={(e) => set("searchOperator", e.target.value as ListState["searchOperator"])}
        >
          <option value="contains">contains</option>
          <option value="starts_with">starts with</option>
          <option value="ends_with">ends with</option>
        </select>
      </fieldset>
      <fieldset>
        <legend>Filter (one at a time)</legend>
        <label htmlFor="filter-field">Filter by</label>
        <select
          id="filter-field"
          value={draft.filterField}
          onChange={(e) => setDraft((d) => ({ ...d, filterField: e.target.value as ListState["filterField"], filterValue: "" }))}
        >
          <option value="">No filter</option>
          <option value="role">Role</option>
          <option value="banned">Banned</option>
          <option value="emailVerified">Email verified</option>
        </select>
        {draft.filterField === "role" && (
          <>
            <label htmlFor="filter-value">Role is</label>
            <input id="filter-value" list="known-roles" value={draft.filterValue} onChange={(e) => set("filterValue", e.target.value)} />
            <datalist id="known-roles">
              <option value="admin" />
              <option value="user" />
            </datalist>
          </>
        )}
        {(draft.filterField === "banned" || draft.filterField === "emailVerified") && (
          <>
            <label htmlFor="filter-value">{draft.filterField === "banned" ? "Banned" : "Email verified"}</label>
            <select id="filter-value" value={draft.filterValue} onChange={(e) => set("filterValue", e.target.value)}>
              <option value="">Choose…</option>
              <option value="true">Yes</option>
              <option value="false">No</option>
            </select>
          </>
        )}
      </fieldset>
      <fieldset>
        <legend>Order</legend>
        <label htmlFor="sort-by">Sort by</label>
        <select id="sort-by" value={draft.sortBy} onChange={(e) => set("sortBy", e.target.value as SortField)}>
          {Object.entries(SORT_FIELDS).map(([field, label]) => (
            <option key={field} value={field}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor="sort-direction">Direction</label>
        <select id="sort-direction" value={draft.sortDirection} onChange={(e) => set("sortDirection", e.target.value as ListState["sortDirection"])}>
          <option value="desc">Descending</option>
          <option value="asc">Ascending</option>
        </select>
        <label htmlFor="page-size">Per page</label>
        <select id="page-size" value={draft.limit} onChange={(e) => set("limit", Number(e.target.value))}>
          {PAGE_SIZES.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </fieldset>
      <div className="actions">
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={reset}>
          Clear search and filter
        </button>
      </div>
    </form>
  );
}
