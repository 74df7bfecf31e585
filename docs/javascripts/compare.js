// The "differences only" switch of the comparison page: hides the rows whose values agree
// in every profile, and the sections left with no row. Pages without the placeholder are
// untouched.
document.addEventListener("DOMContentLoaded", () => {
  const place = document.querySelector(".compare-controls");
  if (!place) return;
  const label = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.id = "differences-only";
  label.append(box, " Show only the rules that differ");
  place.append(label);
  box.addEventListener("change", () => {
    document.body.classList.toggle("differences-only", box.checked);
    for (const table of document.querySelectorAll("table.compare-table")) {
      const empty = box.checked && !table.querySelector("tr.differs-row");
      table.hidden = empty;
      const heading = table.previousElementSibling;
      if (heading && /^H[2-3]$/.test(heading.tagName)) heading.hidden = empty;
    }
  });
});
